package yamlconf

import (
	"encoding"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/wharfdata/wharf/internal/bytesize"
)

// Error is a mistake in a configuration document: its file and line (when known), the key's
// path, and what is wrong.
type Error struct {
	File string
	Line int
	Path string
	Msg  string
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d", e.Line)
		}
		b.WriteString(": ")
	} else if e.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Decoder decodes documents of one file.
type Decoder struct {
	File   string              // the file's path, for messages ("" for flags)
	Dir    string              // ${file:relative} is relative to this directory
	Getenv func(string) string // ${env:NAME}; nil: every variable unset
}

// Raw is a subtree kept as written, to be decoded later with Decode.
type Raw struct {
	Node *yaml.Node
	Path string
	Dec  *Decoder
}

// IsZero reports whether the document gave nothing.
func (r Raw) IsZero() bool { return r.Node == nil }

// Decode decodes the kept subtree into v (a pointer) by the rules of its decoder.
func (r Raw) Decode(v any) error {
	if r.Node == nil {
		return nil
	}
	d := r.Dec
	if d == nil {
		d = &Decoder{}
	}
	return d.Decode(r.Node, v, r.Path)
}

// Line is the line the subtree starts on, 0 when unknown.
func (r Raw) Line() int {
	if r.Node == nil {
		return 0
	}
	return r.Node.Line
}

// ErrorAt returns an *Error at the subtree's line in its file.
func (r Raw) ErrorAt(path, format string, a ...any) *Error {
	e := &Error{Line: r.Line(), Path: path, Msg: fmt.Sprintf(format, a...)}
	if r.Dec != nil {
		e.File = r.Dec.File
	}
	return e
}

// ReadFile reads the YAML document at path: its decoder and its top node (nil for an empty
// file).
func ReadFile(path string, getenv func(string) string) (*Decoder, *yaml.Node, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, nil, &Error{File: path, Msg: err.Error()}
	}
	d := &Decoder{File: path, Dir: filepath.Dir(abs), Getenv: getenv}
	b, err := os.ReadFile(abs)
	if err != nil {
		if pe, ok := err.(*os.PathError); ok {
			err = pe.Err
		}
		return nil, nil, &Error{File: path, Msg: "cannot read the config file: " + err.Error()}
	}
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return nil, nil, &Error{File: path, Msg: "not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	if len(root.Content) == 0 {
		return d, nil, nil
	}
	return d, root.Content[0], nil
}

var (
	rawType         = reflect.TypeFor[Raw]()
	rawTargetType   = reflect.TypeFor[RawTarget]()
	unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()
	textType        = reflect.TypeFor[encoding.TextUnmarshaler]()
	interpPattern   = regexp.MustCompile(`\$\{([^{}]*)\}`)
)

// Decode decodes n into v, a non-nil pointer, strictly. path names n in messages ("" for the
// top level of the file).
func (d *Decoder) Decode(n *yaml.Node, v any, path string) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		panic("yamlconf: Decode needs a non-nil pointer")
	}
	return d.walk(n, rv.Elem(), path, tags{})
}

// DecodeKey decodes one key given as text (a flag's value) into the field of v, a pointer to a
// struct, that has that yaml key (a dotted path: "retry.initial"). source names where the value
// came from ("--endpoint") in messages.
func (d *Decoder) DecodeKey(v any, key, value, source string) error {
	doc := &yaml.Node{Kind: yaml.MappingNode}
	cur := doc
	parts := strings.Split(key, ".")
	for i, p := range parts {
		k := &yaml.Node{Kind: yaml.ScalarNode, Value: p}
		if i == len(parts)-1 {
			cur.Content = append(cur.Content, k, &yaml.Node{Kind: yaml.ScalarNode, Value: value})
			break
		}
		next := &yaml.Node{Kind: yaml.MappingNode}
		cur.Content = append(cur.Content, k, next)
		cur = next
	}
	flagDec := &Decoder{Getenv: d.Getenv, Dir: d.Dir}
	err := flagDec.Decode(doc, v, "")
	if e, ok := err.(*Error); ok {
		e.Line = 0
		e.Path = source
		if strings.HasPrefix(e.Msg, "unknown key") {
			e.Msg = "not an option here: " + e.Msg
		}
	}
	return err
}

func (d *Decoder) errAt(n *yaml.Node, path, format string, a ...any) error {
	return &Error{File: d.File, Line: n.Line, Path: path, Msg: fmt.Sprintf(format, a...)}
}

// tags are what a field's struct tags say about how to read its value.
type tags struct {
	secret bool   // secret:"ref": a credential reference, never interpolated
	bytes  bool   // unit:"bytes": a byte size, "8MiB" or a number
	min    *int64 // min:"N": a number given must be at least N (left out, the default applies)
	word   bool   // null:"word": an unquoted null is the word "null", one of the field's values
}

func (d *Decoder) walk(n *yaml.Node, v reflect.Value, path string, tg tags) error {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		at := n.Line
		n = n.Alias
		if n.Kind == yaml.ScalarNode { // a value's error names the line it is used on
			c := *n
			c.Line = at
			n = &c
		}
	}
	t := v.Type()
	if v.CanAddr() {
		if rt, ok := v.Addr().Interface().(RawTarget); ok {
			rt.SetRaw(Raw{Node: n, Path: path, Dec: d})
			return nil
		}
	}
	switch {
	case t == rawType:
		v.Set(reflect.ValueOf(Raw{Node: n, Path: path, Dec: d}))
		return nil
	case n.Kind == yaml.ScalarNode && n.Tag == "!!null" && tg.word:
		return d.nullWord(n, v, path)
	case n.Kind == yaml.ScalarNode && n.Tag == "!!null":
		return nil
	case t.Kind() == reflect.Pointer && !leaf(t):
		if v.IsNil() {
			v.Set(reflect.New(t.Elem()))
		}
		return d.walk(n, v.Elem(), path, tg)
	case leaf(t):
		return d.leaf(n, v, path, tg)
	case t.Kind() == reflect.Struct:
		return d.walkStruct(n, v, path)
	case t.Kind() == reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return d.errAt(n, orTop(path), "want a list")
		}
		s := reflect.MakeSlice(t, len(n.Content), len(n.Content))
		for i, item := range n.Content {
			if err := d.walk(item, s.Index(i), fmt.Sprintf("%s[%d]", path, i), tg); err != nil {
				return err
			}
		}
		v.Set(s)
		return nil
	case t.Kind() == reflect.Map && t.Key().Kind() == reflect.String:
		if n.Kind != yaml.MappingNode {
			return d.errAt(n, orTop(path), "want a mapping")
		}
		if v.IsNil() {
			v.Set(reflect.MakeMap(t))
		}
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			if seen[k.Value] {
				return d.errAt(k, orTop(path), "key %q given twice", k.Value)
			}
			seen[k.Value] = true
			elem := reflect.New(t.Elem()).Elem()
			if old := v.MapIndex(reflect.ValueOf(k.Value).Convert(t.Key())); old.IsValid() {
				elem.Set(old)
			}
			if err := d.walk(val, elem, join(path, k.Value), tg); err != nil {
				return err
			}
			v.SetMapIndex(reflect.ValueOf(k.Value).Convert(t.Key()), elem)
		}
		return nil
	}
	return d.leaf(n, v, path, tg)
}

// leaf reports whether values of t are decoded whole by yaml rather than walked.
func leaf(t reflect.Type) bool {
	if reflect.PointerTo(t).Implements(rawTargetType) {
		return false
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) || t.Implements(unmarshalerType) {
		return true
	}
	if reflect.PointerTo(t).Implements(textType) || t.Implements(textType) {
		return true
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Slice, reflect.Map:
		return false
	case reflect.Pointer:
		return leaf(t.Elem())
	}
	return true
}

type field struct {
	index []int
	tags  tags
}

// fields maps a struct type's yaml keys to their fields, following inline embedded structs.
func fields(t reflect.Type) map[string]field {
	out := map[string]field{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if strings.Contains(opts, "inline") {
			for k, sub := range fields(f.Type) {
				out[k] = field{index: append([]int{i}, sub.index...), tags: sub.tags}
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		tg := tags{secret: f.Tag.Get("secret") == "ref", bytes: f.Tag.Get("unit") == "bytes", word: f.Tag.Get("null") == "word"}
		if m, err := strconv.ParseInt(f.Tag.Get("min"), 10, 64); err == nil {
			tg.min = &m
		}
		out[name] = field{index: []int{i}, tags: tg}
	}
	return out
}

// RawTarget is implemented by types that keep their subtree as written, to decode it later
// (store.Config keeps a store: section until its URL's scheme names the backend).
type RawTarget interface {
	SetRaw(Raw)
}

// KeysOf returns the yaml keys of v, a struct or a pointer to one, sorted.
func KeysOf(v any) []string {
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	return Keys(t)
}

// Keys returns the yaml keys of the struct type t, sorted: what an error lists as known.
func Keys(t reflect.Type) []string { return slices.Sorted(maps.Keys(fields(t))) }

func (d *Decoder) walkStruct(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind != yaml.MappingNode {
		return d.errAt(n, orTop(path), "want a mapping")
	}
	known := fields(v.Type())
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		f, ok := known[k.Value]
		if !ok {
			if len(known) == 0 {
				return d.errAt(k, orTop(path), "unknown key %q (there are no keys here)", k.Value)
			}
			return d.errAt(k, orTop(path), "unknown key %q (known: %s)", k.Value, strings.Join(Keys(v.Type()), ", "))
		}
		if seen[k.Value] {
			return d.errAt(k, orTop(path), "key %q given twice", k.Value)
		}
		seen[k.Value] = true
		if err := d.walk(val, v.FieldByIndex(f.index), join(path, k.Value), f.tags); err != nil {
			return err
		}
	}
	return nil
}

// nullWord decodes a null into a string field tagged null:"word": null, Null or NULL, as
// written, is that word (infinity: null means write NULL), and the other spellings of YAML's
// null (~, or no value at all) are refused, naming the key, rather than taken as left out.
func (d *Decoder) nullWord(n *yaml.Node, v reflect.Value, path string) error {
	switch {
	case v.Kind() != reflect.String:
		panic(fmt.Sprintf("yamlconf: null:\"word\" on %s, not a string", v.Type()))
	case n.Value == "null" || n.Value == "Null" || n.Value == "NULL":
		v.SetString("null")
		return nil
	case n.Value == "":
		return d.errAt(n, path, "no value: give one, or leave the key out for the default")
	}
	return d.errAt(n, path, "%s is YAML's null: write the word null, or leave the key out for the default", n.Value)
}

func (d *Decoder) leaf(n *yaml.Node, v reflect.Value, path string, tg tags) error {
	if n.Kind == yaml.ScalarNode {
		if tg.secret {
			if strings.Contains(n.Value, "${") {
				return d.errAt(n, path, "a credential: give a reference (env://NAME or file:///path), not ${…}, so that the secret never enters the configuration")
			}
		} else if strings.Contains(n.Value, "${") {
			out, err := d.expand(n.Value)
			if err != nil {
				return d.errAt(n, path, "%v", err)
			}
			c := *n
			c.Value, c.Tag, c.Style = out, "", 0 // re-resolve the type: ${env:ROWS} may be a number
			n = &c
		}
	}
	if tg.bytes && n.Kind == yaml.ScalarNode && v.CanInt() {
		size, err := bytesize.Parse(n.Value)
		if err != nil {
			return d.errAt(n, path, "%v", err)
		}
		v.SetInt(size)
	} else if err := n.Decode(v.Addr().Interface()); err != nil {
		if tg.secret { // yaml's message quotes the value: never a credential's
			return d.errAt(n, path, "a credential: give a reference (env://NAME or file:///path) as a string")
		}
		msg := err.Error()
		msg = strings.TrimPrefix(msg, "yaml: unmarshal errors:\n  ")
		msg = strings.ReplaceAll(msg, "\n  ", "; ")
		if i := strings.Index(msg, ": "); strings.HasPrefix(msg, "line ") && i > 0 {
			msg = msg[i+2:]
		}
		return d.errAt(n, path, "%s", msg)
	}
	if tg.min != nil && v.CanInt() && v.Int() < *tg.min {
		return d.errAt(n, path, "%d: want at least %d (leave it out for the default)", v.Int(), *tg.min)
	}
	return nil
}

// expand replaces the placeholders of s.
func (d *Decoder) expand(s string) (string, error) {
	var first error
	out := interpPattern.ReplaceAllStringFunc(s, func(m string) string {
		v, err := d.value(m[2 : len(m)-1])
		if err != nil && first == nil {
			first = err
		}
		return v
	})
	return out, first
}

func (d *Decoder) value(ref string) (string, error) {
	kind, arg, _ := strings.Cut(ref, ":")
	switch {
	case arg == "":
		return "", fmt.Errorf("${%s}: want ${env:NAME} or ${file:PATH}", ref)
	case kind == "env":
		v := ""
		if d.Getenv != nil {
			v = d.Getenv(arg)
		}
		if v == "" {
			return "", fmt.Errorf("${env:%s}: the environment variable %s is not set", arg, arg)
		}
		return v, nil
	case kind == "file":
		p := arg
		if !filepath.IsAbs(p) {
			p = filepath.Join(d.Dir, p)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return "", fmt.Errorf("${file:%s}: cannot read %s", arg, p)
		}
		return strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r"), nil
	}
	return "", fmt.Errorf("${%s}: unknown kind %q (want env or file)", ref, kind)
}

func orTop(path string) string {
	if path == "" {
		return "the top level"
	}
	return path
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
