package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wharfdata/wharf/backfill"
	"github.com/wharfdata/wharf/internal/yamlconf"
	"github.com/wharfdata/wharf/internal/yamlconf/yamlflag"
	"github.com/wharfdata/wharf/lease"
	"github.com/wharfdata/wharf/ship"
)

// sectionFlags is what a command takes of a section of the config file.
type sectionFlags struct {
	path    string   // the command: "lease acquire"
	section any      // the section's defaults
	noFlag  []string // the section's keys that are no flag, on purpose (tagged flag:"-")
	some    bool     // the command takes only some of the section's keys as flags
	own     []string // the command's flags that set no key of the section
}

var sectionCommands = []sectionFlags{
	{path: "backfill", section: backfill.DefaultConfig(),
		noFlag: []string{"source", "nats.user", "nats.password", "nats.token", "store", "to_store"},
		own:    []string{"replan", "metrics-file"}},
	{path: "backfill status", section: backfill.DefaultConfig(), some: true},
	{path: "ship", section: ship.DefaultConfig(), noFlag: []string{"store", "iceberg.catalog"}, own: []string{"log-level"}},
	{path: "lease acquire", section: lease.DefaultConfig(), own: []string{"store"}},
	{path: "lease renew", section: lease.DefaultConfig(), own: []string{"store", "fence"}},
	{path: "lease release", section: lease.DefaultConfig(), own: []string{"store", "fence"}},
	{path: "lease show", section: lease.DefaultConfig(), own: []string{"store"}},
	{path: "lease log", section: lease.DefaultConfig(), own: []string{"store", "limit"}},
	{path: "lease run", section: lease.DefaultConfig(), own: []string{"store", "grace", "metrics-file"}},
	{path: "export", section: struct{}{}, own: []string{"export", "resume", "force", "validate", "parallel", "metrics-file"}},
}

// commandFlags are the flags of the command at path, its own and those its parents give it,
// less the global ones and help.
func commandFlags(t *testing.T, root *cobra.Command, path string) (*cobra.Command, *pflag.FlagSet) {
	t.Helper()
	c, rest, err := root.Find(strings.Fields(path))
	if err != nil || len(rest) > 0 {
		t.Fatalf("%s: %v %v", path, err, rest)
	}
	fl := pflag.NewFlagSet(path, pflag.ContinueOnError)
	add := func(f *pflag.Flag) {
		if f.Name != "help" && (root.PersistentFlags().Lookup(f.Name) == nil || c.LocalFlags().Lookup(f.Name) != nil) && fl.Lookup(f.Name) == nil {
			fl.AddFlag(f)
		}
	}
	c.LocalFlags().VisitAll(add)
	c.InheritedFlags().VisitAll(add)
	return c, fl
}

// TestEveryKeyHasItsFlag: every key of every job section is a flag of its command, made from
// the key's field (no table to forget a flag in), and every flag of those commands is a key
// of the section or one of the command's own, listed here; a key with no flag is one listed
// here too. The export command's flags are its own: no key of state: or exports: is a flag.
func TestEveryKeyHasItsFlag(t *testing.T) {
	root := newTestApp(nil, "").rootCommand()
	for _, sc := range sectionCommands {
		_, fl := commandFlags(t, root, sc.path)
		keys := yamlflag.Flags(fl, sc.section)
		opts := map[string]yamlconf.Option{}
		if _, ok := sc.section.(struct{}); !ok {
			for _, o := range yamlconf.Options(sc.section) {
				opts[o.Key] = o
			}
		}
		for key, o := range opts {
			switch {
			case o.Flag == "" && !sc.some && !slices.Contains(sc.noFlag, key):
				t.Errorf("%s: the key %s has no flag and is not listed as having none", sc.path, key)
			case o.Flag != "" && slices.Contains(sc.noFlag, key):
				t.Errorf("%s: the key %s, listed as having no flag, has --%s", sc.path, key, o.Flag)
			case o.Flag != "" && keys[o.Flag] != key && !sc.some:
				t.Errorf("%s: the key %s has no flag --%s (it has: %v)", sc.path, key, o.Flag, keys)
			case o.Flag != "" && o.Help == "" && keys[o.Flag] == key:
				t.Errorf("%s: --%s has no help (a help:\"…\" tag on the key %s)", sc.path, o.Flag, key)
			}
		}
		fl.VisitAll(func(f *pflag.Flag) {
			key, ok := keys[f.Name]
			switch {
			case ok && opts[key].Flag != f.Name:
				t.Errorf("%s: --%s sets %q, which is not the key it is made from", sc.path, f.Name, key)
			case !ok && !slices.Contains(sc.own, f.Name):
				t.Errorf("%s: --%s sets no key of the section and is not listed among the command's own flags", sc.path, f.Name)
			}
		})
		for _, name := range sc.own {
			if fl.Lookup(name) == nil {
				t.Errorf("%s: no flag --%s, listed among its own", sc.path, name)
			}
		}
		if sc.some && len(keys) == 0 {
			t.Errorf("%s: takes no key of its section", sc.path)
		}
	}
}

// TestKeysAndFlagsDocumented: docs/cli.md names every flag made from a key, and each job's
// page names every key of its section.
func TestKeysAndFlagsDocumented(t *testing.T) {
	cli := readDoc(t, "cli.md")
	for _, s := range []struct {
		doc     string
		section any
	}{{"backfill.md", backfill.DefaultConfig()}, {"ship.md", ship.DefaultConfig()}, {"lease.md", lease.DefaultConfig()}} {
		page := readDoc(t, s.doc)
		for _, o := range yamlconf.Options(s.section) {
			if o.Flag != "" && !strings.Contains(cli, "`--"+o.Flag) {
				t.Errorf("docs/cli.md does not name --%s (the key %s of %s)", o.Flag, o.Key, s.doc)
			}
			last := o.Key[strings.LastIndex(o.Key, ".")+1:]
			if !strings.Contains(page, "`"+o.Key+"`") && !strings.Contains(page, "`"+last+"`") {
				t.Errorf("docs/%s does not name the key %s", s.doc, o.Key)
			}
		}
	}
}

// TestSectionPrecedence: for every job section the same order fills a key: the default, then
// the environment, then the file, then the flag (docs/config.md).
func TestSectionPrecedence(t *testing.T) {
	env := map[string]string{"WHARF_NODE_ID": "env-node"}
	for _, tc := range []struct {
		path, section string
		node          func(a *app, fl *pflag.FlagSet) (string, error)
	}{
		{"backfill", "backfill:\n  to: '-'\n", func(a *app, fl *pflag.FlagSet) (string, error) {
			cfg, err := a.backfillConfig(fl, []string{t.TempDir() + "/"})
			return cfg.Node, err
		}},
		{"ship", "ship:\n  spool: ./spool\n  to: ./bucket\n  pipeline: edge\n", func(a *app, fl *pflag.FlagSet) (string, error) {
			cfg, err := a.shipConfig(fl)
			return cfg.Node, err
		}},
		{"lease acquire", "lease:\n  ttl: 5m\n", func(a *app, fl *pflag.FlagSet) (string, error) {
			cfg, err := a.leaseConfig(fl)
			return cfg.Node, err
		}},
	} {
		for _, step := range []struct {
			env       map[string]string
			file, arg string
			want      string
		}{
			{nil, "", "", map[string]string{"backfill": "", "ship": "", "lease acquire": "local"}[tc.path]},
			{env, "", "", "env-node"},
			{env, "  node: file-node\n", "", "file-node"},
			{env, "  node: file-node\n", "flag-node", "flag-node"},
		} {
			_, fl := commandFlags(t, newTestApp(nil, "").rootCommand(), tc.path) // fresh flags
			a := newTestApp(step.env, writeConfig(t, tc.section+step.file))
			var args []string
			if step.arg != "" {
				args = []string{"--node", step.arg}
			}
			if err := fl.Parse(args); err != nil {
				t.Fatal(err)
			}
			got, err := tc.node(a, fl)
			if got != step.want {
				t.Errorf("%s with env %v, file %q, flag %q: node %q (err %v), want %q", tc.path, step.env, step.file, step.arg, got, err, step.want)
			}
		}
	}
}
