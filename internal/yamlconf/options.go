package yamlconf

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/wharfdata/wharf/internal/bytesize"
)

// Option is one key of a section as its struct field declares it, once: the key (a dotted
// path through nested structs: "retry.initial"), the flag that also sets it, its help, its
// unit and its default. Package yamlflag makes the flags from these.
//
// The tags a field carries, beside yaml:"key":
//
//	flag:"name"     the flag's name; without it, the key with '_' and '.' as '-'
//	                ("retry.initial" is --retry-initial); flag:"-" for a key with no flag
//	help:"text"     the flag's help
//	default:"text"  the default as shown, for one computed elsewhere ("$WHARF_NODE_ID, else
//	                host-pid"); without it, the value of the defaults the options are read from
//	unit:"bytes"    a byte size (also read with a unit from the file: "8MiB")
type Option struct {
	Key     string       // "retry.initial"
	Flag    string       // "retry-initial"; "" for a key tagged flag:"-"
	Help    string       // the flag's help
	Default string       // the default as shown; "" for none worth showing (a zero value)
	Told    bool         // Default is the text of a default:"…" tag, not a value
	Unit    string       // "bytes", or ""
	Type    reflect.Type // the field's type
}

// Options returns the options of defaults, a struct or a pointer to one, in field order,
// their defaults read from it. A nested struct gives its fields under its key; a subtree kept
// raw (a store's options) and a list or map must be tagged flag:"-": they are no flag's.
func Options(defaults any) []Option {
	v := reflect.ValueOf(defaults)
	for v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		panic(fmt.Sprintf("yamlconf: Options of %s, not a struct", v.Type()))
	}
	return options(v, "", false)
}

func options(v reflect.Value, prefix string, noFlag bool) []Option {
	var out []Option
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		fv := v.Field(i)
		if strings.Contains(opts, "inline") {
			out = append(out, options(fv, prefix, noFlag)...)
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		key := join(prefix, name)
		off := noFlag || f.Tag.Get("flag") == "-"
		if !leaf(f.Type) {
			kept := f.Type == rawType || reflect.PointerTo(f.Type).Implements(rawTargetType)
			if f.Type.Kind() == reflect.Struct && !kept {
				out = append(out, options(fv, key, off)...)
				continue
			}
			if !off {
				panic(fmt.Sprintf("yamlconf: %s.%s (%s): a subtree, list or map is no flag's: tag it flag:\"-\"", t, f.Name, key))
			}
			out = append(out, Option{Key: key, Type: f.Type})
			continue
		}
		o := Option{Key: key, Help: f.Tag.Get("help"), Unit: f.Tag.Get("unit"), Type: f.Type}
		if !off {
			o.Flag = f.Tag.Get("flag")
			if o.Flag == "" {
				o.Flag = strings.NewReplacer("_", "-", ".", "-").Replace(key)
			}
		}
		o.Default = f.Tag.Get("default")
		o.Told = o.Default != ""
		if !o.Told && !fv.IsZero() {
			o.Default = FormatValue(fv, o.Unit)
		}
		out = append(out, o)
	}
	return out
}

// FormatValue writes v as a config file would: a byte size with its unit ("64MiB"), a
// duration without its zero parts ("30m", not "30m0s").
func FormatValue(v reflect.Value, unit string) string {
	switch {
	case unit == "bytes" && v.CanInt():
		return bytesize.Format(v.Int())
	case v.Type() == reflect.TypeFor[time.Duration]():
		return formatDuration(time.Duration(v.Int()))
	}
	return fmt.Sprint(v.Interface())
}

func formatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
