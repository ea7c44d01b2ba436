package yamlflag

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/wharfdata/wharf/internal/yamlconf"
)

type retry struct {
	Initial time.Duration `yaml:"initial" help:"first wait"`
	Jitter  bool          `yaml:"jitter" help:"jitter the waits"`
}

type mode struct {
	Mode string `yaml:"mode" flag:"retention" help:"what to keep"`
}

type section struct {
	Source string            `yaml:"source" flag:"-"`
	Node   string            `yaml:"node" help:"this node's id" default:"$NODE, else local"`
	Count  int               `yaml:"count" help:"how many" min:"1"`
	Size   int64             `yaml:"size" unit:"bytes" help:"how big"`
	Drain  bool              `yaml:"drain" help:"stop when done"`
	Retry  retry             `yaml:"retry"`
	Keep   mode              `yaml:"local_retention"`
	Raw    yamlconf.Raw      `yaml:"raw" flag:"-"`
	Tags   map[string]string `yaml:"tags" flag:"-"`
}

func defaults() section {
	return section{Node: "local", Count: 2, Size: 8 << 20, Retry: retry{Initial: time.Minute, Jitter: true}, Keep: mode{"all"}}
}

func parse(t *testing.T, args ...string) (*pflag.FlagSet, error) {
	t.Helper()
	fl := pflag.NewFlagSet("x", pflag.ContinueOnError)
	Add(fl, defaults())
	return fl, fl.Parse(args)
}

// TestOptionsFromTags: each key is one option, a nested struct's under its key, named flags
// by their tag or their key, defaults read from the value given or the default:"…" tag.
func TestOptionsFromTags(t *testing.T) {
	got := map[string]yamlconf.Option{}
	for _, o := range yamlconf.Options(defaults()) {
		got[o.Key] = o
	}
	for key, want := range map[string]struct{ flag, def string }{
		"source": {"", ""}, "node": {"node", "$NODE, else local"}, "count": {"count", "2"},
		"size": {"size", "8MiB"}, "drain": {"drain", ""}, "retry.initial": {"retry-initial", "1m"},
		"retry.jitter": {"retry-jitter", "true"}, "local_retention.mode": {"retention", "all"},
		"raw": {"", ""}, "tags": {"", ""},
	} {
		o, ok := got[key]
		if !ok || o.Flag != want.flag || o.Default != want.def {
			t.Errorf("option %q = %+v (found %v); want flag %q, default %q", key, o, ok, want.flag, want.def)
		}
	}
	if len(got) != 10 {
		t.Errorf("%d options, want 10: %v", len(got), got)
	}
}

// TestOptionsRefuseAnUntaggedSubtree: a subtree, list or map is no flag's, and saying so is
// required, so that a key never has no flag by accident.
func TestOptionsRefuseAnUntaggedSubtree(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "flag:\"-\"") {
			t.Errorf("recovered %v, want a panic asking for flag:\"-\"", r)
		}
	}()
	yamlconf.Options(struct {
		List []string `yaml:"list"`
	}{})
}

// TestHelpShowsUnitsAndDefaults: sizes and durations say so, defaults are shown as a config
// file writes them, a told default as written.
func TestHelpShowsUnitsAndDefaults(t *testing.T) {
	fl, _ := parse(t)
	var b bytes.Buffer
	fl.SetOutput(&b)
	fl.PrintDefaults()
	for _, want := range []string{
		"--size size ", "how big (default 8MiB)", "--retry-initial duration ", "first wait (default 1m)",
		"--count int ", "how many (default 2)", "this node's id (default: $NODE, else local)\n",
		"--drain ", "stop when done\n", "jitter the waits (default true)", `what to keep (default "all")`,
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("help lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "--source") || strings.Contains(b.String(), "--raw") {
		t.Errorf("help shows a key tagged flag:\"-\":\n%s", b.String())
	}
}

// TestApplyOverlaysOnlyTheFlagsGiven: flags win over what the value holds (the file's), by
// the key's rules (units, ${env:…}); a flag not given changes nothing.
func TestApplyOverlaysOnlyTheFlagsGiven(t *testing.T) {
	fl, err := parse(t, "--size", "16 MiB", "--retry-initial", "5s", "--retention", "none", "--drain", "--retry-jitter=false",
		"--node", "${env:NODE}")
	if err != nil {
		t.Fatal(err)
	}
	v := defaults()
	v.Count = 9 // the file's
	if err := Apply(fl, &v, &yamlconf.Decoder{Getenv: func(string) string { return "n1" }}); err != nil {
		t.Fatal(err)
	}
	want := section{Node: "n1", Count: 9, Size: 16 << 20, Drain: true, Retry: retry{Initial: 5 * time.Second}, Keep: mode{"none"}}
	if !reflect.DeepEqual(v, want) {
		t.Errorf("after Apply: %+v, want %+v", v, want)
	}
	if got := Flags(fl, section{}); got["retention"] != "local_retention.mode" || got["size"] != "size" || len(got) != 7 {
		t.Errorf("Flags = %v", got)
	}
}

// TestApplyNamesTheFlag: a value the key refuses names the flag and why.
func TestApplyNamesTheFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--count", "0"}, "--count: 0: want at least 1"},
		{[]string{"--size", "lots"}, "--size: "},
	} {
		fl, err := parse(t, tc.args...)
		if err != nil {
			t.Fatal(err)
		}
		v := defaults()
		err = Apply(fl, &v, &yamlconf.Decoder{})
		var ye *yamlconf.Error
		if !errors.As(err, &ye) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a *yamlconf.Error containing %q", tc.args, err, tc.want)
		}
	}
}

// TestAddSomeKeys: a command that takes only some keys of a section declares only them.
func TestAddSomeKeys(t *testing.T) {
	fl := pflag.NewFlagSet("x", pflag.ContinueOnError)
	Add(fl, defaults(), "count", "retry.initial")
	if got := Flags(fl, section{}); len(got) != 2 || got["count"] != "count" || got["retry-initial"] != "retry.initial" {
		t.Errorf("Flags = %v, want count and retry-initial", got)
	}
}

// TestTypedFlagsReadAsPflagDoes: a duration, bool or int flag reads what pflag's own did
// ("--retry-initial 0", "--drain=1", "--count 0x10"), and refuses a bad one as it parses.
func TestTypedFlagsReadAsPflagDoes(t *testing.T) {
	fl, err := parse(t, "--retry-initial", "0", "--drain=1", "--count", "0x10")
	if err != nil {
		t.Fatal(err)
	}
	v := defaults()
	if err := Apply(fl, &v, &yamlconf.Decoder{}); err != nil {
		t.Fatal(err)
	}
	if v.Retry.Initial != 0 || !v.Drain || v.Count != 16 {
		t.Errorf("after Apply: %+v", v)
	}
	for _, args := range [][]string{{"--retry-initial", "soon"}, {"--drain=maybe"}, {"--count", "many"}} {
		if _, err := parse(t, args...); err == nil || !strings.Contains(err.Error(), "invalid argument") {
			t.Errorf("%v: %v, want pflag's invalid argument", args, err)
		}
	}
}
