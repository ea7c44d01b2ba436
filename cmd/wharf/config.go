package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/wharfdata/wharf/backfill"
	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/export"
	"github.com/wharfdata/wharf/internal/yamlconf"
	"github.com/wharfdata/wharf/lease"
	"github.com/wharfdata/wharf/load"
	"github.com/wharfdata/wharf/ship"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
	"github.com/wharfdata/wharf/store/file"
	"github.com/wharfdata/wharf/transfer"
)

// The CLI composes; it owns no job's options. wharf.yaml has one section per package, each
// decoded by the one strict loader (internal/yamlconf) into that package's own type, and every
// value is filled in one order: the package's defaults, then the environment it documents,
// then the file, then the flags (docs/config.md). Adding a section is a type in its package
// and a field here.

// defaultConfig is the config file the export commands read when --config is not given.
const defaultConfig = "wharf.yaml"

// envAllowlist is the variable of endpoint host patterns every store's endpoint must match.
const envAllowlist = "WHARF_ENDPOINT_ALLOWLIST"

// fileConfig is wharf.yaml as written: any key not here is an error naming it and its line.
type fileConfig struct {
	export.Config `yaml:",inline"` // state: and exports:
	Ship          *ship.Config     `yaml:"ship"`
	Backfill      *backfill.Config `yaml:"backfill"`
	Stores        store.Stores     `yaml:"stores"`
	Lease         *lease.Config    `yaml:"lease"` // for the lease commands and state: bucket
	Load          load.Config      `yaml:"load"`  // each export's load target, by its name
	// EndpointAllowlist adds host patterns to WHARF_ENDPOINT_ALLOWLIST: every store's endpoint
	// must match one, and an export destination's custom endpoint outside this machine needs
	// one even when the list is otherwise empty.
	EndpointAllowlist []string `yaml:"endpoint_allowlist"`
}

// config is a loaded config file.
type config struct {
	path string // as given, for messages
	dir  string // its directory: relative paths in it are relative to this
	file fileConfig
	has  map[string]bool // the top-level keys the file gave
}

// configErr makes a loader error an exit-2 configuration error naming the file and line.
func configErr(err error) error {
	var se *store.Error
	var ce *errcode.Error
	if err == nil || errors.As(err, &se) || errors.As(err, &ce) {
		return err
	}
	return errcode.E("config", "", store.ErrConfig, err)
}

// readConfig reads and strictly decodes the config file at path. It has no side effects:
// nothing is created, nothing is connected to.
func (a *app) readConfig(path string) (*config, error) {
	dec, doc, err := yamlconf.ReadFile(path, a.getenv)
	if err != nil {
		return nil, configErr(err)
	}
	c := &config{path: path, dir: dec.Dir, has: map[string]bool{}}
	if doc == nil {
		return c, nil
	}
	if doc.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(doc.Content); i += 2 {
			c.has[doc.Content[i].Value] = true
		}
	}
	a.sectionDefaults(c)
	if err := dec.Decode(doc, &c.file, ""); err != nil {
		return nil, configErr(err)
	}
	if err := c.file.Stores.Check(); err != nil {
		return nil, configErr(err)
	}
	return c, nil
}

// sectionDefaults fills the job sections the file gives with their defaults and the
// environment's, to be decoded over: every section is read, strictly, whichever command reads
// the file, so a misspelt key under backfill: is refused by `wharf export` too.
func (a *app) sectionDefaults(c *config) {
	if c.has["ship"] {
		cfg := ship.DefaultConfig()
		cfg.FromEnv(a.getenv)
		c.file.Ship = &cfg
	}
	if c.has["backfill"] {
		cfg := backfill.DefaultConfig()
		cfg.FromEnv(a.getenv)
		c.file.Backfill = &cfg
	}
	if c.has["lease"] {
		cfg := lease.DefaultConfig()
		cfg.FromEnv(a.getenv)
		c.file.Lease = &cfg
	}
}

// flagKeys lists, for a command's help, the keys of a section that are also flags.
func flagKeys(section any) string {
	var keys []string
	for _, o := range yamlconf.Options(section) {
		if o.Flag != "" {
			keys = append(keys, o.Key)
		}
	}
	return strings.Join(keys, ", ")
}

// configFile is the config the global --config flag names, read once; nil without one.
func (a *app) configFile() (*config, error) {
	if a.configPath == "" || a.cfgRead {
		return a.cfg, a.cfgErr
	}
	a.cfgRead = true
	a.cfg, a.cfgErr = a.readConfig(a.configPath)
	return a.cfg, a.cfgErr
}

// exportsConfig reads the config file of the export commands (--config, default wharf.yaml):
// every export checked, paths made absolute against the file's directory, each destination's
// store options checked before anything is opened.
func (a *app) exportsConfig() (*config, error) {
	if a.configPath == "" {
		a.configPath = defaultConfig
	}
	path := a.configPath
	c, err := a.configFile()
	if err != nil {
		return nil, err
	}
	if len(c.has) == 0 {
		return nil, configErr(&yamlconf.Error{File: path, Msg: "the config file is empty (want state: and exports:)"})
	}
	if err := c.file.Config.Prepare(path, c.dir, a.storeConfig); err != nil {
		return nil, err
	}
	return c, nil
}

// pick returns the exports named name, or all when name is "".
func (c *config) pick(name string) ([]export.Export, error) {
	if name == "" {
		return c.file.Exports, nil
	}
	var names []string
	for _, e := range c.file.Exports {
		if e.Name == name {
			return []export.Export{e}, nil
		}
		names = append(names, e.Name)
	}
	return nil, usageErr(fmt.Errorf("--export %q: %s has no such export (it has: %s)", name, c.path, strings.Join(names, ", ")))
}

// history is where the config's exports record their runs.
func (c *config) history() export.History {
	return export.History{StatePath: c.file.State, Exports: c.file.Exports}
}

// storeConfig completes the store options of a section (nil: none) with what the CLI adds
// for every store: the environment, the allow-list (WHARF_ENDPOINT_ALLOWLIST and the config
// file's endpoint_allowlist), the named stores of the config file, the global flags
// (--endpoint, --region, --anonymous, which win over the file) and the logger.
func (a *app) storeConfig(section *store.Config) *store.Config {
	var c store.Config
	if section != nil {
		c = *section
	}
	c.Getenv = a.getenv
	c.Allowlist = driver.ParseAllowlist(a.getenv(envAllowlist))
	c.Logger = a.log
	if cf, _ := a.configFile(); cf != nil {
		c.Allowlist = append(c.Allowlist, cf.file.EndpointAllowlist...)
		c.Stores = cf.file.Stores
	}
	c.Set = append(slices.Clone(c.Set), a.storeFlags()...)
	return &c
}

// storeFlags are the global store flags given, as options of whatever store is opened.
func (a *app) storeFlags() []store.Setting {
	var out []store.Setting
	if a.endpoint != "" {
		out = append(out, store.Setting{Name: "endpoint", Value: a.endpoint, Source: "--endpoint"})
	}
	if a.region != "" {
		out = append(out, store.Setting{Name: "region", Value: a.region, Source: "--region"})
	}
	if a.profile != "" {
		out = append(out, store.Setting{Name: "profile", Value: a.profile, Source: "--profile"})
	}
	if a.anonymous {
		out = append(out, store.Setting{Name: "anonymous", Value: "true", Source: "--anonymous"})
	}
	return out
}

// parseURL parses a store URL, reading the names of the config file's stores too.
func (a *app) parseURL(raw string) (store.Location, error) {
	if _, err := a.configFile(); err != nil {
		return store.Location{}, err
	}
	return a.storeConfig(nil).ParseURL(raw)
}

// open opens the store at loc with the global options.
func (a *app) open(ctx context.Context, loc store.Location) (*store.Store, error) {
	return a.openWith(ctx, loc, a.storeConfig(nil))
}

func (a *app) openWith(ctx context.Context, loc store.Location, cfg *store.Config) (*store.Store, error) {
	s, err := store.OpenLocation(ctx, loc, cfg)
	if err == nil {
		a.log.Debug("opened store", "url", loc.String(), "endpoint", s.Describe().Endpoint)
	}
	return s, err
}

// stores is how cp, and every command naming one object, read URLs and open stores; a local
// path inside no file store (file.IsStore) is cp's plain local file (docs/cli.md, "Local
// paths").
func (a *app) stores() (transfer.Stores, error) {
	if _, err := a.configFile(); err != nil {
		return transfer.Stores{}, err
	}
	return transfer.Stores{Config: a.storeConfig(nil), Open: a.openWith, IsStore: file.IsStore}, nil
}

// openURL opens the store raw names (a URL, a path or a named store, whole, key included as
// the store's prefix). An error names raw. The caller closes the store.
func (a *app) openURL(ctx context.Context, raw string) (*store.Store, error) {
	loc, err := a.parseURL(raw)
	if err != nil {
		return nil, err
	}
	s, err := a.open(ctx, loc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", raw, err)
	}
	return s, nil
}

// openObject opens the store that holds the object raw names and returns it with the key.
// A URL that names a bucket, a prefix or a directory is ErrKeyInvalid. An error names raw.
// The caller closes the store.
func (a *app) openObject(ctx context.Context, raw string) (*store.Store, string, error) {
	st, err := a.stores()
	if err != nil {
		return nil, "", err
	}
	loc, err := st.ParseObject(raw)
	if err != nil {
		return nil, "", err
	}
	s, err := a.open(ctx, loc.Root())
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", raw, err)
	}
	return s, loc.Key, nil
}

// openList opens the store raw names at its root and returns it with raw's location, whose
// key is the prefix to list. An error names raw. The caller closes the store.
func (a *app) openList(ctx context.Context, raw string) (store.Location, *store.Store, error) {
	loc, err := a.parseURL(raw)
	if err != nil {
		return loc, nil, err
	}
	s, err := a.open(ctx, loc.Root())
	if err != nil {
		return loc, nil, fmt.Errorf("%s: %w", raw, err)
	}
	return loc, s, nil
}

// openPrefix is openList of raw read as a directory, as rm -r and du read it: s3://b/logs is
// every key under logs/, never logs-old/.
func (a *app) openPrefix(ctx context.Context, raw string) (store.Location, *store.Store, error) {
	loc, s, err := a.openList(ctx, raw)
	if err == nil && loc.Key != "" && !strings.HasSuffix(loc.Key, "/") {
		loc.Key += "/"
	}
	return loc, s, err
}
