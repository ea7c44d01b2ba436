package yamlconf

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// planted is the value of every variable and file a test offers: no error may contain it.
const planted = "hunter2-planted-secret"

type Credentials struct {
	Password string  `yaml:"password" secret:"ref"`
	Token    *string `yaml:"token" secret:"ref"`
}

type secretDoc struct {
	Credentials `yaml:",inline"`
	Name        string            `yaml:"name"`
	Count       int               `yaml:"count"`
	Keys        []string          `yaml:"keys" secret:"ref"`
	Headers     map[string]string `yaml:"headers" secret:"ref"`
	Store       struct {
		Endpoint  string `yaml:"endpoint"`
		SecretKey string `yaml:"secret_key" secret:"ref"`
	} `yaml:"store"`
	Later Raw `yaml:"later"`
}

// secretEnv is a decoder whose every variable and file holds the planted secret, and which
// records the variables it was asked for.
func secretEnv(t *testing.T) (*Decoder, *[]string) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "secret.txt"), []byte(planted+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var asked []string
	return &Decoder{File: "wharf.yaml", Dir: dir, Getenv: func(k string) string {
		asked = append(asked, k)
		return planted
	}}, &asked
}

// noLeak fails the test when text holds the planted secret.
func noLeak(t *testing.T, where, text string) {
	t.Helper()
	if strings.Contains(text, planted) {
		t.Errorf("%s: the secret leaked: %s", where, text)
	}
}

// ${…} in a field tagged secret:"ref" is refused wherever the field is (inline, pointer, list,
// map, nested section, a subtree decoded later, an alias of another field's value, a flag):
// the error names the key and its line, the variable or file is never read, and neither the
// field nor the error holds the secret.
func TestSecretFieldRefusesInterpolation(t *testing.T) {
	const refused = "a credential: give a reference (env://NAME or file:///path), not ${…}, so that the secret never enters the configuration"
	for _, tc := range []struct{ doc, where string }{
		{"name: x\npassword: ${env:DB_PASSWORD}", "wharf.yaml:2: password"},
		{"password: env://${env:NAME}", "wharf.yaml:1: password"},
		{`password: "${file:secret.txt}"`, "wharf.yaml:1: password"},
		{"password: ${nonsense}", "wharf.yaml:1: password"},
		{"password: 'pre${env:A}post'", "wharf.yaml:1: password"},
		{"token: ${env:TOKEN}", "wharf.yaml:1: token"},
		{"keys:\n  - env://A\n  - ${env:B}", "wharf.yaml:3: keys[1]"},
		{"headers:\n  auth: ${env:AUTH}", "wharf.yaml:2: headers.auth"},
		{"store:\n  endpoint: https://e\n  secret_key: ${file:secret.txt}", "wharf.yaml:3: store.secret_key"},
		{"name: &n \"${env:X}\"\ncount: 1\npassword: *n", "wharf.yaml:3: password"},
	} {
		d, asked := secretEnv(t)
		var v secretDoc
		err := decodeWith(t, d, tc.doc, &v)
		if want := tc.where + ": " + refused; err == nil || err.Error() != want {
			t.Errorf("%q: %v\nwant %s", tc.doc, err, want)
		}
		if len(*asked) > 0 && !strings.Contains(tc.doc, "*n") {
			t.Errorf("%q: the environment was asked for %v", tc.doc, *asked)
		}
		noLeak(t, tc.doc, err.Error())
		noLeak(t, tc.doc+" (decoded)", strings.Join([]string{v.Password, v.Store.SecretKey, strings.Join(v.Keys, ","), v.Headers["auth"]}, ","))
		if v.Token != nil {
			noLeak(t, tc.doc+" (decoded)", *v.Token)
		}
	}

	// A subtree kept as written is decoded later by the same rule.
	d, _ := secretEnv(t)
	var v secretDoc
	if err := decodeWith(t, d, "later:\n  password: ${env:P}\n", &v); err != nil {
		t.Fatal(err)
	}
	var c Credentials
	if err := v.Later.Decode(&c); err == nil || err.Error() != "wharf.yaml:2: later.password: "+refused {
		t.Errorf("a Raw decoded later: %v", err)
	}
	noLeak(t, "a Raw decoded later", c.Password)

	// A flag is decoded by the same rule.
	err := d.DecodeKey(&v, "store.secret_key", "${env:S}", "--secret-key")
	if err == nil || err.Error() != "--secret-key: "+refused {
		t.Errorf("a flag: %v", err)
	}
	noLeak(t, "a flag", v.Store.SecretKey)
}

// A credential reference is kept as written, never resolved while decoding: the secret it
// names is read only when used, so the decoded configuration does not hold it, even where
// another field is an alias of the reference.
func TestSecretReferenceKeptAsWritten(t *testing.T) {
	d, asked := secretEnv(t)
	var v secretDoc
	doc := "password: &p env://DB_PASSWORD\ntoken: file:///run/token\nname: *p\nkeys: [env://A, file://./k]\n"
	if err := decodeWith(t, d, doc, &v); err != nil {
		t.Fatal(err)
	}
	if v.Password != "env://DB_PASSWORD" || v.Token == nil || *v.Token != "file:///run/token" ||
		v.Name != "env://DB_PASSWORD" || !reflect.DeepEqual(v.Keys, []string{"env://A", "file://./k"}) {
		t.Errorf("decoded %+v", v)
	}
	if len(*asked) > 0 {
		t.Errorf("decoding references asked the environment for %v", *asked)
	}
}

// A secret field's value never appears in an error, whatever is wrong with it.
func TestSecretFieldValueNeverInErrors(t *testing.T) {
	for _, doc := range []string{
		"password: !!int " + planted,
		"password: !!float " + planted,
		"password: !!bool " + planted,
		"password: !!timestamp " + planted,
		"keys: [ok, !!int " + planted + "]",
		"password: [" + planted + "]",
		"password: {" + planted + ": x}",
		"headers: {h: !!int " + planted + "}",
		"passwrod: " + planted,
	} {
		var v secretDoc
		err := decodeDoc(t, doc, &v)
		if err == nil {
			t.Errorf("%q: decoded", doc)
			continue
		}
		if !strings.HasPrefix(err.Error(), "wharf.yaml:1: ") {
			t.Errorf("%q: %v: want the file and line", doc, err)
		}
		noLeak(t, doc, err.Error())
	}
}

// Interpolation is one pass over what the file says: a value read from a variable or a file
// is not interpolated again, so a value cannot pull another variable (or a secret file) into
// the configuration.
func TestInterpolationIsOnePass(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "inner.txt"), []byte("${env:SECRET}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d := &Decoder{File: "wharf.yaml", Dir: dir, Getenv: envOf(map[string]string{
		"OUTER": "${env:SECRET}", "SECRET": planted, "FILE": "${file:inner.txt}"})}
	for _, doc := range []string{"name: ${env:OUTER}", "name: ${file:inner.txt}", "name: ${env:FILE}"} {
		var v secretDoc
		if err := decodeWith(t, d, doc, &v); err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		noLeak(t, doc, v.Name)
		if !strings.HasPrefix(v.Name, "${") {
			t.Errorf("%s: %q, want the inner placeholder as written", doc, v.Name)
		}
	}
}

// ${env:NAME} and ${file:PATH} fill other fields: several in one value, a relative path from
// the file's directory, one trailing newline trimmed, the type read from the result.
func TestInterpolation(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"host.txt": "db.internal\n", "crlf.txt": "svc\r\n", "n.txt": "12"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	d := &Decoder{File: "wharf.yaml", Dir: dir, Getenv: envOf(map[string]string{"PORT": "5432", "N": "7"})}
	for doc, want := range map[string]string{
		"name: ${file:host.txt}:${env:PORT}":                     "db.internal:5432",
		"name: ${file:" + filepath.Join(dir, "crlf.txt") + "}":   "svc",
		"name: '${env:PORT}'":                                    "5432",
		"store: {endpoint: 'https://${file:host.txt}'}\nname: x": "x",
	} {
		var v secretDoc
		if err := decodeWith(t, d, doc, &v); err != nil || v.Name != want {
			t.Errorf("%s: %q, %v; want %q", doc, v.Name, err, want)
		}
	}
	var v secretDoc
	if err := decodeWith(t, d, "count: ${env:N}\nstore: {endpoint: 'https://${file:host.txt}'}", &v); err != nil ||
		v.Count != 7 || v.Store.Endpoint != "https://db.internal" {
		t.Errorf("a number and a nested value: %+v, %v", v, err)
	}
	if err := decodeWith(t, d, "count: ${file:n.txt}", &v); err != nil || v.Count != 12 {
		t.Errorf("a number from a file: %d, %v", v.Count, err)
	}
}

// A placeholder that cannot be filled is an error naming it, the key and the line.
func TestInterpolationErrors(t *testing.T) {
	dir := t.TempDir()
	d := &Decoder{File: "wharf.yaml", Dir: dir, Getenv: envOf(map[string]string{"SET": planted})}
	for doc, want := range map[string]string{
		"count: 1\nname: ${env:UNSET}":  "wharf.yaml:2: name: ${env:UNSET}: the environment variable UNSET is not set",
		"name: ${env:SET}-${env:UNSET}": "wharf.yaml:1: name: ${env:UNSET}: the environment variable UNSET is not set",
		"name: ${file:gone.txt}":        "wharf.yaml:1: name: ${file:gone.txt}: cannot read " + filepath.Join(dir, "gone.txt"),
		"name: ${vault:x}":              `wharf.yaml:1: name: ${vault:x}: unknown kind "vault" (want env or file)`,
		"name: ${env:}":                 "wharf.yaml:1: name: ${env:}: want ${env:NAME} or ${file:PATH}",
		"name: ${SET}":                  "wharf.yaml:1: name: ${SET}: want ${env:NAME} or ${file:PATH}",
	} {
		var v secretDoc
		err := decodeWith(t, d, doc, &v)
		if err == nil || err.Error() != want {
			t.Errorf("%q: %v\nwant %s", doc, err, want)
			continue
		}
		noLeak(t, doc, err.Error())
	}
}
