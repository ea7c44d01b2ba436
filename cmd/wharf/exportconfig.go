package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/wharfdata/wharf/export"
	"github.com/wharfdata/wharf/store"
)

// defaultConfig is the config file the export commands read when -c is not given.
const defaultConfig = "wharf.yaml"

// defaultState is the state file, relative to the config file's directory.
const defaultState = ".wharf/state.db"

// demoRows is the size of the demo table an export with `demo: true` creates.
const demoRows = 1000

// fileConfig is wharf.yaml as written. Every key is listed here; any other key is an error
// naming it and its line (see checkKeys).
type fileConfig struct {
	State   string       `yaml:"state"`
	Exports []fileExport `yaml:"exports"`
	Ship    any          `yaml:"ship"` // the ship service's section: wharf ship checks it
}

type fileExport struct {
	Name         string    `yaml:"name"`
	Demo         bool      `yaml:"demo"`
	Validate     bool      `yaml:"validate"`
	Source       string    `yaml:"source"`
	Password     string    `yaml:"password"`
	Table        string    `yaml:"table"`
	Query        string    `yaml:"query"`
	ChunkKey     string    `yaml:"chunk_key"`
	ChunkRows    *int      `yaml:"chunk_rows"` // nil: the default; 0 is refused`
	Mode         string    `yaml:"mode"`
	CursorColumn string    `yaml:"cursor_column"`
	Format       string    `yaml:"format"`
	Destination  string    `yaml:"destination"`
	Store        fileStore `yaml:"store"`

	InvalidUTF8 export.UTF8Policy          `yaml:"invalid_utf8"`
	TimeUnits   map[string]export.TimeUnit `yaml:"time_units"`
	Infinity    export.InfinityPolicy      `yaml:"infinity"`
	Superseded  export.SupersededPolicy    `yaml:"superseded"`
}

type fileStore struct {
	Endpoint           string `yaml:"endpoint"`
	Region             string `yaml:"region"`
	Anonymous          bool   `yaml:"anonymous"`
	Credentials        string `yaml:"credentials"`
	AccessKeyID        string `yaml:"access_key_id"`
	SecretAccessKey    string `yaml:"secret_access_key"`
	SessionToken       string `yaml:"session_token"`
	AccountKey         string `yaml:"account_key"`
	SASToken           string `yaml:"sas_token"`
	ServiceAccountFile string `yaml:"service_account_file"`
	PartSize           int64  `yaml:"part_size"`
	Concurrency        int    `yaml:"concurrency"`
}

// credentialKeys are the keys whose values are credential references (env://, file://): they
// are never interpolated, so a secret cannot enter the config as a literal.
var credentialKeys = []string{"password", "access_key_id", "secret_access_key", "session_token",
	"account_key", "sas_token", "service_account_file"}

// exportConfig is a loaded config: paths absolute, placeholders interpolated, every export
// checked.
type exportConfig struct {
	path    string // the config file, absolute
	dir     string // its directory: relative paths in it are relative to this
	state   string // the state file, absolute
	exports []configuredExport
}

// configuredExport is one export and what the CLI does around it.
type configuredExport struct {
	export.Export
	demo     bool // create the SQLite source with demo rows when it is missing
	validate bool // validate the prefix after each run (as --validate does)
}

// configError is a mistake in the config file: exit 2, naming the file, line and key.
type configError struct {
	file string
	line int // 0: unknown
	msg  string
	code string
}

func (e *configError) Error() string {
	if e.line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.file, e.line, e.msg)
	}
	return e.file + ": " + e.msg
}

func (e *configError) Code() string { return e.code }

func (c *exportConfig) errAt(line int, format string, a ...any) error {
	return &configError{file: c.path, line: line, msg: fmt.Sprintf(format, a...), code: store.ErrConfig.Code()}
}

// readConfigYAML reads the config file at path as YAML: its config (for errors naming the
// file and line) and its document node, nil for an empty file.
func readConfigYAML(path string) (*exportConfig, *yaml.Node, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, nil, &configError{file: path, msg: err.Error(), code: store.ErrConfig.Code()}
	}
	c := &exportConfig{path: abs, dir: filepath.Dir(abs)}
	b, err := os.ReadFile(abs)
	if err != nil {
		return nil, nil, c.errAt(0, "cannot read the config file: %v", errors.Unwrap(err))
	}
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return nil, nil, c.errAt(0, "not valid YAML: %s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(root.Content) == 0 {
		return c, nil, nil
	}
	return c, root.Content[0], nil
}

// loadConfig reads, checks and resolves the config file at path. It has no side effects:
// nothing is created, nothing is connected to.
func (a *app) loadConfig(path string) (*exportConfig, error) {
	c, doc, err := readConfigYAML(path)
	if err != nil {
		return nil, err
	}
	if doc == nil {
		return nil, c.errAt(0, "the config file is empty (want state: and exports:)")
	}
	if err := c.checkKeys(doc, reflect.TypeFor[fileConfig](), ""); err != nil {
		return nil, err
	}
	in := interpolator{getenv: a.getenv, dir: c.dir, errAt: c.errAt}
	if err := in.walk(doc, ""); err != nil {
		return nil, err
	}
	var fc fileConfig
	if err := doc.Decode(&fc); err != nil {
		return nil, c.errAt(0, "%s", strings.ReplaceAll(strings.TrimPrefix(err.Error(), "yaml: unmarshal errors:\n  "), "\n  ", "; "))
	}
	if err := c.resolve(a, doc, &fc); err != nil {
		return nil, err
	}
	return c, nil
}

// checkKeys walks n against the struct type t and refuses a key t does not have, naming the
// key, where it is and its line.
func (c *exportConfig) checkKeys(n *yaml.Node, t reflect.Type, path string) error {
	switch {
	case t.Kind() == reflect.Slice && n.Kind == yaml.SequenceNode:
		for i, item := range n.Content {
			if err := c.checkKeys(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case t.Kind() == reflect.Struct && n.Kind == yaml.MappingNode:
		known := yamlFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			ft, ok := known[k.Value]
			if !ok {
				return c.errAt(k.Line, "unknown key %q in %s (known: %s)", k.Value, orTop(path),
					strings.Join(slices.Sorted(maps.Keys(known)), ", "))
			}
			if err := c.checkKeys(v, ft, joinPath(path, k.Value)); err != nil {
				return err
			}
		}
	case t.Kind() == reflect.Struct && n.Kind == yaml.ScalarNode && n.Tag == "!!null":
	case t.Kind() == reflect.Struct || t.Kind() == reflect.Slice:
		return c.errAt(n.Line, "%s: want a %s", orTop(path), map[reflect.Kind]string{reflect.Struct: "mapping", reflect.Slice: "list"}[t.Kind()])
	}
	return nil
}

func yamlFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		out[name] = f.Type
	}
	return out
}

func orTop(path string) string {
	if path == "" {
		return "the top level"
	}
	return path
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// resolve turns the decoded file into checked exports: the state path and local sources and
// destinations made absolute against the config's directory, store options completed.
func (c *exportConfig) resolve(a *app, doc *yaml.Node, fc *fileConfig) error {
	c.state = c.localPath(fc.State)
	if fc.State == "" {
		c.state = filepath.Join(c.dir, defaultState)
	}
	if len(fc.Exports) == 0 {
		return c.errAt(doc.Line, "no exports: add a list under exports:")
	}
	seen := map[string]bool{}
	for i, fe := range fc.Exports {
		line := exportLine(doc, i)
		e := configuredExport{demo: fe.Demo, validate: fe.Validate, Export: export.Export{
			Name: fe.Name, Source: c.sourceURL(fe.Source), Password: fe.Password, Table: fe.Table,
			Query: fe.Query, ChunkKey: fe.ChunkKey, Mode: export.Mode(fe.Mode),
			CursorColumn: fe.CursorColumn, Format: export.Format(fe.Format),
			Destination: c.destination(fe.Destination),
			InvalidUTF8: fe.InvalidUTF8, TimeUnits: fe.TimeUnits, Infinity: fe.Infinity, Superseded: fe.Superseded,
		}}
		if fe.ChunkRows != nil {
			if *fe.ChunkRows == 0 {
				return c.errAt(line, "exports[%d].chunk_rows: 0: want a positive number of rows (leave it out for the default, %d)", i, export.DefaultChunkRows)
			}
			e.ChunkRows = *fe.ChunkRows
		}
		if seen[fe.Name] {
			return c.errAt(line, "exports[%d]: a second export named %q", i, fe.Name)
		}
		seen[fe.Name] = true
		if err := e.Check(); err != nil {
			return c.errAt(line, "exports[%d]: %v", i, err)
		}
		e.Store = a.exportStoreConfig(e.Destination, fe.Store)
		if err := checkStore(e.Export); err != nil {
			return &configError{file: c.path, line: line, msg: fmt.Sprintf("exports[%d].store: %v", i, err), code: store.Code(err)}
		}
		c.exports = append(c.exports, e)
	}
	return nil
}

// exportLine is the line of the i-th export in the document, for messages.
func exportLine(doc *yaml.Node, i int) int {
	for j := 0; j+1 < len(doc.Content); j += 2 {
		if doc.Content[j].Value == "exports" && i < len(doc.Content[j+1].Content) {
			return doc.Content[j+1].Content[i].Line
		}
	}
	return 0
}

// localPath makes a relative path absolute against the config's directory.
func (c *exportConfig) localPath(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(c.dir, p)
}

// sourceURL resolves sqlite://relative/path.db against the config's directory.
func (c *exportConfig) sourceURL(src string) string {
	rest, ok := strings.CutPrefix(src, "sqlite://")
	if !ok || strings.HasPrefix(rest, "/") || rest == "" {
		return src
	}
	return "sqlite://" + filepath.ToSlash(c.localPath(rest))
}

// destination resolves a relative local destination against the config's directory; URLs
// with a scheme are left as they are.
func (c *exportConfig) destination(d string) string {
	scheme, _, ok := strings.Cut(d, "://")
	if d == "" || d == "-" || (ok && !strings.ContainsAny(scheme, "/.\\")) {
		return d
	}
	abs := c.localPath(d)
	if strings.HasSuffix(d, "/") && !strings.HasSuffix(abs, "/") {
		abs += "/"
	}
	return abs
}

// exportStoreConfig is the store.Config of an export: the config file's store options, then
// for S3 the environment's endpoint and region when the file gives none, then the global
// flags, which win. The destination's own query (?endpoint=…) wins over all, in store.Open.
func (a *app) exportStoreConfig(dest string, fs fileStore) store.Config {
	cfg := store.Config{
		Endpoint: fs.Endpoint, Region: fs.Region, Anonymous: fs.Anonymous, Credentials: fs.Credentials,
		AccessKeyID: fs.AccessKeyID, SecretAccessKey: fs.SecretAccessKey, SessionToken: fs.SessionToken,
		AccountKey: fs.AccountKey, SASToken: fs.SASToken, ServiceAccountFile: fs.ServiceAccountFile,
		PartSize: fs.PartSize, Concurrency: fs.Concurrency,
		Allowlist: store.ParseAllowlist(a.getenv(envAllowlist)), Logger: a.log,
	}
	if strings.HasPrefix(dest, "s3://") {
		cfg.Endpoint = firstSet(cfg.Endpoint, a.getenv(envEndpointS3), a.getenv(envEndpoint))
		cfg.Region = firstSet(cfg.Region, a.getenv(envRegion), a.getenv(envDefaultRegion))
	}
	cfg.Endpoint = firstSet(a.endpoint, cfg.Endpoint)
	cfg.Region = firstSet(a.region, cfg.Region)
	cfg.Anonymous = cfg.Anonymous || a.anonymous
	return cfg
}

// pick returns the exports named name, or all when name is "".
func (c *exportConfig) pick(name string) ([]configuredExport, error) {
	if name == "" {
		return c.exports, nil
	}
	var names []string
	for _, e := range c.exports {
		if e.Name == name {
			return []configuredExport{e}, nil
		}
		names = append(names, e.Name)
	}
	return nil, usageErr(fmt.Errorf("--export %q: %s has no such export (it has: %s)", name, c.path, strings.Join(names, ", ")))
}

// prepareDemo creates the demo SQLite source of an export marked demo: true when it is
// missing, and reports whether it did.
func prepareDemo(ctx context.Context, e configuredExport) (string, error) {
	rest, ok := strings.CutPrefix(e.Source, "sqlite://")
	if !e.demo || !ok {
		return "", nil
	}
	path := filepath.FromSlash(rest)
	if _, err := os.Stat(path); err == nil {
		return "", nil
	}
	return path, export.CreateDemo(ctx, path, demoRows)
}

// checkStore applies the store's own checks (endpoint rules, credential references and
// combinations) at config load, before anything is connected to.
func checkStore(e export.Export) error {
	sample, err := export.Expand(e.Destination, export.Vars{Date: "2006-01-02", Table: "t", Export: "e", RunID: "r"})
	if err != nil {
		return err
	}
	loc, err := store.ParseURL(sample)
	if err != nil {
		return err
	}
	cfg := e.Store
	if err := cfg.ApplyQuery(loc); err != nil {
		return err
	}
	return cfg.Check(loc)
}
