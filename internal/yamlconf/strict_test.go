package yamlconf

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// The types below stand for a configuration file: sections, lists of sections, an inline
// embedded struct, a map of entries, a pointer section and a section with no keys.

type Common struct {
	Region string `yaml:"region"`
}

type item struct {
	Key  string `yaml:"key"`
	Size int64  `yaml:"size" unit:"bytes"`
}

type section struct {
	Name  string `yaml:"name"`
	Items []item `yaml:"items"`
}

type retry struct {
	Attempts int    `yaml:"attempts"`
	Mode     string `yaml:"mode"`
}

type fileDoc struct {
	Common   `yaml:",inline"`
	Sections []section         `yaml:"sections"`
	Retry    retry             `yaml:"retry"`
	Backup   *retry            `yaml:"backup"`
	Labels   map[string]string `yaml:"labels"`
	Entries  map[string]retry  `yaml:"entries"`
	Empty    struct{}          `yaml:"empty"`
	Plain    string            // no yaml tag: its key is its lower-cased name
	Skipped  string            `yaml:"-"`
	//lint:ignore U1000 present only to show that an unexported field is no key
	hidden string
}

const fileDocKeys = "backup, empty, entries, labels, plain, region, retry, sections"

// An unknown or misspelt key is refused wherever it is, naming the key, its place and its line,
// and the keys known there; the message is exact, so a wrong line, place or list fails.
func TestUnknownKeyNamesKeyPlaceAndLine(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"top", "region: eu\nregoin: us\n",
			`wharf.yaml:2: the top level: unknown key "regoin" (known: ` + fileDocKeys + `)`},
		{"section", "retry:\n  attempts: 3\n  atempts: 4\n",
			`wharf.yaml:3: retry: unknown key "atempts" (known: attempts, mode)`},
		{"pointer section", "backup:\n  mode: x\n  mdoe: y\n",
			`wharf.yaml:3: backup: unknown key "mdoe" (known: attempts, mode)`},
		{"list in a list", "sections:\n  - name: a\n  - name: b\n    items:\n      - key: k\n      - kye: k\n",
			`wharf.yaml:6: sections[1].items[1]: unknown key "kye" (known: key, size)`},
		{"map entry", "entries:\n  one:\n    mode: x\n  two:\n    attempt: 1\n",
			`wharf.yaml:5: entries.two: unknown key "attempt" (known: attempts, mode)`},
		{"no keys here", "plain: p\nempty:\n  x: 1\n",
			`wharf.yaml:3: empty: unknown key "x" (there are no keys here)`},
		{"yaml:\"-\" is no key", "skipped: x\n",
			`wharf.yaml:1: the top level: unknown key "skipped" (known: ` + fileDocKeys + `)`},
		{"unexported is no key", "hidden: x\n",
			`wharf.yaml:1: the top level: unknown key "hidden" (known: ` + fileDocKeys + `)`},
		{"a key given twice", "retry:\n  mode: a\n  attempts: 1\n  mode: b\n",
			`wharf.yaml:4: retry: key "mode" given twice`},
		{"a map key given twice", "labels:\n  team: a\n  site: b\n  team: c\n",
			`wharf.yaml:4: labels: key "team" given twice`},
		{"a map entry given twice", "entries:\n  one:\n    mode: x\n  one:\n    attempts: 2\n",
			`wharf.yaml:4: entries: key "one" given twice`},
		{"a list where a mapping goes", "retry:\n  - attempts\n",
			`wharf.yaml:2: retry: want a mapping`},
		{"a scalar where a list goes", "sections: all\n",
			`wharf.yaml:1: sections: want a list`},
		{"a scalar where a map goes", "labels:\n  team: a\nentries: none\n",
			`wharf.yaml:3: entries: want a mapping`},
		{"a list at the top", "- region: eu\n",
			`wharf.yaml:1: the top level: want a mapping`},
		{"an alias names the line it is used on", "plain: &w three\nretry:\n  attempts: *w\n",
			"wharf.yaml:3: retry.attempts: cannot unmarshal !!str `three` into int"},
		{"a wrong type", "retry:\n  attempts: three\n",
			"wharf.yaml:2: retry.attempts: cannot unmarshal !!str `three` into int"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v fileDoc
			err := decodeDoc(t, tc.doc, &v)
			var ye *Error
			if !errors.As(err, &ye) {
				t.Fatalf("%v: want a *yamlconf.Error", err)
			}
			if err.Error() != tc.want {
				t.Errorf("got  %s\nwant %s", err, tc.want)
			}
		})
	}
}

// Every key a document may hold decodes into its field: inline, nested, pointer, listed,
// mapped and untagged.
func TestKnownKeysDecode(t *testing.T) {
	doc := `region: eu
plain: p
retry: {attempts: 3, mode: fast}
backup: {mode: slow}
labels: {team: data}
entries:
  one: {attempts: 1}
sections:
  - name: a
    items:
      - {key: k1, size: 8MiB}
      - {key: k2}
  - name: b
`
	var v fileDoc
	if err := decodeDoc(t, doc, &v); err != nil {
		t.Fatal(err)
	}
	want := fileDoc{Common: Common{Region: "eu"}, Plain: "p", Retry: retry{3, "fast"},
		Backup: &retry{Mode: "slow"}, Labels: map[string]string{"team": "data"},
		Entries:  map[string]retry{"one": {Attempts: 1}},
		Sections: []section{{Name: "a", Items: []item{{"k1", 8 << 20}, {Key: "k2"}}}, {Name: "b"}}}
	if !reflect.DeepEqual(v, want) {
		t.Errorf("got  %+v\nwant %+v", v, want)
	}
}

// The keys an error lists are the struct's yaml keys, inline ones included, sorted.
func TestKeysOf(t *testing.T) {
	want := strings.Split(fileDocKeys, ", ")
	for _, v := range []any{fileDoc{}, &fileDoc{}, new(*fileDoc)} {
		if got := KeysOf(v); !slices.Equal(got, want) {
			t.Errorf("KeysOf(%T) = %v, want %v", v, got, want)
		}
	}
	if got := KeysOf(3); got != nil {
		t.Errorf("KeysOf(3) = %v, want none", got)
	}
}

func TestErrorText(t *testing.T) {
	for _, tc := range []struct {
		e    Error
		want string
	}{
		{Error{File: "w.yaml", Line: 3, Path: "a.b", Msg: "bad"}, "w.yaml:3: a.b: bad"},
		{Error{File: "w.yaml", Path: "a", Msg: "bad"}, "w.yaml: a: bad"},
		{Error{Line: 3, Path: "a", Msg: "bad"}, "line 3: a: bad"},
		{Error{Path: "--flag", Msg: "bad"}, "--flag: bad"},
		{Error{Msg: "bad"}, "bad"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.e, got, tc.want)
		}
	}
}

// A flag's value goes through the same decoder as the file, by its dotted key; its errors
// name the flag, not a line.
func TestDecodeKey(t *testing.T) {
	d := &Decoder{File: "wharf.yaml", Getenv: envOf(map[string]string{"MODE": "fast"})}
	v := fileDoc{Retry: retry{Attempts: 2}}
	if err := d.DecodeKey(&v, "retry.mode", "${env:MODE}", "--retry-mode"); err != nil {
		t.Fatal(err)
	}
	if err := d.DecodeKey(&v, "region", "eu", "--region"); err != nil {
		t.Fatal(err)
	}
	if v.Retry != (retry{2, "fast"}) || v.Region != "eu" {
		t.Errorf("after the flags: %+v", v)
	}
	for _, tc := range []struct{ key, value, want string }{
		{"retry.mdoe", "x", `--flag: not an option here: unknown key "mdoe" (known: attempts, mode)`},
		{"regoin", "x", `--flag: not an option here: unknown key "regoin" (known: ` + fileDocKeys + `)`},
		{"retry.attempts", "many", "--flag: cannot unmarshal !!str `many` into int"},
		{"retry.mode", "${env:UNSET}", "--flag: ${env:UNSET}: the environment variable UNSET is not set"},
	} {
		err := d.DecodeKey(&v, tc.key, tc.value, "--flag")
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s=%s: %v\nwant %s", tc.key, tc.value, err, tc.want)
		}
	}
}

// rawSection keeps its subtree, to be decoded later against a type chosen by another key.
type rawSection struct {
	Kind string `yaml:"kind"`
	Opts Raw    `yaml:"opts"`
}

type keeper struct{ raw Raw }

func (k *keeper) SetRaw(r Raw) { k.raw = r }

// A Raw field, or a RawTarget, keeps its subtree as written; decoded later it keeps the file,
// the place and the line numbers of the document it came from, and its rules.
func TestRawDecodesLaterByTheSameRules(t *testing.T) {
	doc := "kind: retry\nopts:\n  attempts: 4\n  mdoe: x\n"
	var v rawSection
	if err := decodeDoc(t, doc, &v); err != nil {
		t.Fatal(err)
	}
	if v.Opts.IsZero() || v.Opts.Line() != 3 {
		t.Fatalf("kept %+v, line %d; want the subtree at line 3", v.Opts, v.Opts.Line())
	}
	var r retry
	err := v.Opts.Decode(&r)
	if want := `wharf.yaml:4: opts: unknown key "mdoe" (known: attempts, mode)`; err == nil || err.Error() != want {
		t.Errorf("decoded later: %v\nwant %s", err, want)
	}
	if got := v.Opts.ErrorAt("opts.attempts", "too many: %d", 4).Error(); got != "wharf.yaml:3: opts.attempts: too many: 4" {
		t.Errorf("ErrorAt: %s", got)
	}

	var k struct {
		K keeper `yaml:"k"`
	}
	if err := decodeDoc(t, "k:\n  attempts: 5\n", &k); err != nil {
		t.Fatal(err)
	}
	if err := k.K.raw.Decode(&r); err != nil || r.Attempts != 5 || k.K.raw.Path != "k" {
		t.Errorf("a RawTarget: %+v, %v", r, err)
	}
	if got := k.K.raw.ErrorAt("k", "bad").Error(); got != "wharf.yaml:2: k: bad" {
		t.Errorf("a RawTarget's ErrorAt: %s", got)
	}

	var none Raw
	if !none.IsZero() || none.Line() != 0 || none.Decode(&r) != nil {
		t.Error("a Raw the document did not give is not zero")
	}
}

// ReadFile names the file in every error, and an empty file is no document.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := write("ok.yaml", "region: ${file:region.txt}\nretry:\n  atempts: 1\n")
	write("region.txt", "eu\n")
	d, n, err := ReadFile(p, nil)
	if err != nil || n == nil || d.File != p || d.Dir != dir {
		t.Fatalf("ReadFile: %+v, %v, %v", d, n, err)
	}
	var v fileDoc
	err = d.Decode(n, &v, "")
	if want := p + `:3: retry: unknown key "atempts" (known: attempts, mode)`; err == nil || err.Error() != want {
		t.Errorf("%v\nwant %s", err, want)
	}
	if v.Region != "eu" {
		t.Errorf("${file:} relative to the file's directory: region %q", v.Region)
	}

	if _, n, err := ReadFile(write("empty.yaml", "# nothing\n"), nil); n != nil || err != nil {
		t.Errorf("an empty file: %v, %v", n, err)
	}
	bad := write("bad.yaml", "a: [1\n")
	if _, _, err := ReadFile(bad, nil); err == nil || !strings.HasPrefix(err.Error(), bad+": not valid YAML: ") {
		t.Errorf("bad YAML: %v", err)
	}
	missing := filepath.Join(dir, "missing.yaml")
	if _, _, err := ReadFile(missing, nil); err == nil || err.Error() != missing+": cannot read the config file: no such file or directory" {
		t.Errorf("a missing file: %v", err)
	}
}
