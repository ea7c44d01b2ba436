package yamlconf

import (
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

type nullWordOptions struct {
	Policy string `yaml:"policy" null:"word"`
	Other  string `yaml:"other"`
}

// decodeDoc decodes doc, as the file wharf.yaml with no environment, into v.
func decodeDoc(t *testing.T, doc string, v any) error {
	t.Helper()
	return decodeWith(t, &Decoder{File: "wharf.yaml"}, doc, v)
}

// decodeWith decodes doc into v with d.
func decodeWith(t *testing.T, d *Decoder, doc string, v any) error {
	t.Helper()
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &root); err != nil {
		t.Fatal(err)
	}
	return d.Decode(root.Content[0], v, "")
}

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// A field tagged null:"word" reads a bare null as the word; other spellings of YAML's null
// are refused by name; untagged fields keep reading null as left out.
func TestNullWord(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{"policy: null", "null"}, {"policy: Null", "null"}, {"policy: NULL", "null"},
		{`policy: "null"`, "null"}, {"policy: clamp", "clamp"}, {"other: x", "default"},
	} {
		o := nullWordOptions{Policy: "default"}
		if err := decodeDoc(t, tc.doc, &o); err != nil || o.Policy != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.doc, o.Policy, err, tc.want)
		}
	}
	for _, doc := range []string{"other: x\npolicy: ~", "other: x\npolicy:"} {
		o := nullWordOptions{Policy: "default"}
		err := decodeDoc(t, doc, &o)
		if err == nil || !strings.HasPrefix(err.Error(), "wharf.yaml:2: policy: ") {
			t.Errorf("%q: %v; want an error naming line 2 and the key", doc, err)
		}
	}
	o := nullWordOptions{Other: "kept"}
	if err := decodeDoc(t, "other: null", &o); err != nil || o.Other != "kept" {
		t.Errorf("an untagged null: %q, %v", o.Other, err)
	}
}

type policy string

type nullWordSection struct {
	Name      string            `yaml:"name"`
	Infinity  policy            `yaml:"infinity" null:"word"`
	Overrides map[string]policy `yaml:"overrides" null:"word"`
}

type nullWordDoc struct {
	Sections []nullWordSection `yaml:"sections"`
}

// The null word holds for a named string type, in a list of sections and in a map; a ~ deep
// in a document is refused at its own line and place.
func TestNullWordNested(t *testing.T) {
	var v nullWordDoc
	doc := "sections:\n  - name: a\n    infinity: NULL\n    overrides: {ts: null, d: clamp}\n  - name: b\n"
	if err := decodeDoc(t, doc, &v); err != nil {
		t.Fatal(err)
	}
	want := []nullWordSection{{Name: "a", Infinity: "null", Overrides: map[string]policy{"ts": "null", "d": "clamp"}}, {Name: "b"}}
	if !reflect.DeepEqual(v.Sections, want) {
		t.Errorf("got %+v, want %+v", v.Sections, want)
	}
	for doc, want := range map[string]string{
		"sections:\n  - name: a\n  - name: b\n    infinity: ~\n": "wharf.yaml:4: sections[1].infinity: ~ is YAML's null: write the word null, or leave the key out for the default",
		"sections:\n  - overrides:\n      ts:\n":                 "wharf.yaml:3: sections[0].overrides.ts: no value: give one, or leave the key out for the default",
	} {
		var v nullWordDoc
		if err := decodeDoc(t, doc, &v); err == nil || err.Error() != want {
			t.Errorf("%q: %v\nwant %s", doc, err, want)
		}
	}
}
