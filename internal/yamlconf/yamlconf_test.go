package yamlconf

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

type nullWordOptions struct {
	Policy string `yaml:"policy" null:"word"`
	Other  string `yaml:"other"`
}

func decodeDoc(t *testing.T, doc string, v any) error {
	t.Helper()
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &root); err != nil {
		t.Fatal(err)
	}
	return (&Decoder{File: "wharf.yaml"}).Decode(root.Content[0], v, "")
}

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
