package main

import (
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/wharfdata/wharf/ship"
	"github.com/wharfdata/wharf/store"
)

// envNodeID names this machine when neither --node nor ship.node does.
const envNodeID = "WHARF_NODE_ID"

// shipFileTop is the top level of a config file as `wharf ship` reads it: its own section,
// and the export commands' keys, which it leaves to them.
var shipFileTop = []string{"ship", "state", "exports"}

// fileShip is the ship: section of wharf.yaml. Every key is also a flag of `wharf ship`.
type fileShip struct {
	Spool              string         `yaml:"spool"`
	To                 string         `yaml:"to"`
	Pipeline           string         `yaml:"pipeline"`
	Node               string         `yaml:"node"`
	UploadConcurrency  int            `yaml:"upload_concurrency"`
	MultipartThreshold sizeValue      `yaml:"multipart_threshold"`
	PartSize           sizeValue      `yaml:"part_size"`
	ConditionalPut     string         `yaml:"conditional_put"`
	Retry              fileRetry      `yaml:"retry"`
	LocalRetention     fileRetention  `yaml:"local_retention"`
	Grace              *time.Duration `yaml:"grace"`
	PollInterval       time.Duration  `yaml:"poll_interval"`
	Listen             string         `yaml:"listen"`
	ListenRemote       bool           `yaml:"listen_remote"`
	Drain              bool           `yaml:"drain"`
	Store              fileStore      `yaml:"store"`
}

type fileRetry struct {
	Initial time.Duration `yaml:"initial"`
	Max     time.Duration `yaml:"max"`
	Jitter  *bool         `yaml:"jitter"`
}

type fileRetention struct {
	Mode    string        `yaml:"mode"`
	KeepFor time.Duration `yaml:"keep_for"`
}

// sizeValue is a byte size written as a number or with a unit: 33554432, 32MiB, "8 MiB".
type sizeValue int64

func (v *sizeValue) UnmarshalYAML(n *yaml.Node) error {
	size, err := ship.ParseSize(n.Value)
	if err != nil {
		return err
	}
	*v = sizeValue(size)
	return nil
}

// shipFlags are the flags of `wharf ship`: each a key of the ship: section.
type shipFlags struct {
	config                       string
	cfg                          ship.Config
	threshold, partSize, keepFor string
	retention                    string
	putMode                      string
}

func (f *shipFlags) register(fl *pflag.FlagSet) {
	d := ship.DefaultConfig()
	fl.StringVarP(&f.config, "config", "c", "", "the config file (its ship: section); flags override it")
	fl.StringVar(&f.cfg.Spool, "spool", "", "the spool directory (made by `wharf spool init`)")
	fl.StringVar(&f.cfg.To, "to", "", "the destination URL: s3://bucket/prefix, gs://…, az://…, file:///dir")
	fl.StringVar(&f.cfg.Pipeline, "pipeline", "", "the pipeline name, written into every key")
	fl.StringVar(&f.cfg.Node, "node", "", "this machine's id, written into every key (default: $"+envNodeID+")")
	fl.IntVar(&f.cfg.UploadConcurrency, "upload-concurrency", d.UploadConcurrency, "files uploaded at once (also the part buffers shared by multipart uploads)")
	fl.StringVar(&f.threshold, "multipart-threshold", ship.FormatSize(d.MultipartThreshold), "files above this size go multipart")
	fl.StringVar(&f.partSize, "part-size", ship.FormatSize(d.PartSize), "multipart part size, 5MiB to 5GiB")
	fl.StringVar(&f.putMode, "conditional-put", string(d.ConditionalPut), "auto, create or overwrite")
	fl.DurationVar(&f.cfg.Retry.Initial, "retry-initial", d.Retry.Initial, "first wait before retrying a file")
	fl.DurationVar(&f.cfg.Retry.Max, "retry-max", d.Retry.Max, "longest wait between retries of a file")
	fl.BoolVar(&f.cfg.Retry.Jitter, "retry-jitter", d.Retry.Jitter, "draw each wait from the upper half of its range")
	fl.StringVar(&f.retention, "retention", string(d.Retention.Mode), "local retention: delete_after_upload, keep_for or keep")
	fl.StringVar(&f.keepFor, "keep-for", d.Retention.KeepFor.String(), "with --retention keep_for: how long a file stays after its upload")
	fl.DurationVar(&f.cfg.Grace, "grace", d.Grace, "after SIGTERM, how long uploads in flight may finish")
	fl.DurationVar(&f.cfg.PollInterval, "poll-interval", d.PollInterval, "how often the spool's catalog is re-read for new files")
	fl.StringVar(&f.cfg.Listen, "listen", d.Listen, "address of /metrics, /status and /healthz (loopback unless --listen-remote; off for none)")
	fl.BoolVar(&f.cfg.ListenRemote, "listen-remote", false, "allow a --listen address that is not loopback")
	fl.BoolVar(&f.cfg.Drain, "drain", false, "exit once nothing is left to ship (a batch run), instead of serving until SIGTERM")
}

// shipConfig builds the service's config: defaults, then the config file's ship: section,
// then the flags given, then the environment for what is still unset.
func (a *app) shipConfig(fl *pflag.FlagSet, f *shipFlags) (ship.Config, error) {
	cfg := ship.DefaultConfig()
	var fs fileShip
	if f.config != "" {
		c, err := a.loadShipFile(f.config, &fs)
		if err != nil {
			return ship.Config{}, err
		}
		applyShipFile(&cfg, fs, c)
	}
	if err := applyShipFlags(&cfg, fl, f); err != nil {
		return ship.Config{}, err
	}
	if cfg.Node == "" {
		cfg.Node = a.getenv(envNodeID)
	}
	cfg.Store = a.exportStoreConfig(cfg.To, fs.Store)
	cfg.Store.PartSize, cfg.Store.Concurrency = 0, 0
	where := "ship"
	if f.config != "" {
		where = f.config + ": ship"
	}
	if fs.Store.PartSize != 0 || fs.Store.Concurrency != 0 {
		return ship.Config{}, &configError{file: f.config, msg: "ship.store.part_size and ship.store.concurrency are not used by ship: give ship.part_size and ship.upload_concurrency",
			code: store.ErrConfig.Code()}
	}
	if err := cfg.Check(); err != nil {
		return ship.Config{}, fmt.Errorf("%s: %w", where, err)
	}
	if err := checkShipStore(cfg); err != nil {
		return ship.Config{}, fmt.Errorf("%s.store: %w", where, err)
	}
	return cfg, nil
}

// loadShipFile reads the config file at path into fs: strict (an unknown key is an error
// naming it and its line), ${env:…}/${file:…} interpolated except in credential fields.
func (a *app) loadShipFile(path string, fs *fileShip) (*exportConfig, error) {
	c, doc, err := readConfigYAML(path)
	if err != nil {
		return nil, err
	}
	if doc == nil || doc.Kind != yaml.MappingNode {
		return nil, c.errAt(0, "want a mapping with a ship: section")
	}
	var section *yaml.Node
	for i := 0; i+1 < len(doc.Content); i += 2 {
		k, v := doc.Content[i], doc.Content[i+1]
		if !slices.Contains(shipFileTop, k.Value) {
			return nil, c.errAt(k.Line, "unknown key %q in the top level (known: %s)", k.Value, strings.Join(shipFileTop, ", "))
		}
		if k.Value == "ship" {
			section = v
		}
	}
	if section == nil {
		return nil, c.errAt(doc.Line, "no ship: section")
	}
	if err := c.checkKeys(section, reflect.TypeFor[fileShip](), "ship"); err != nil {
		return nil, err
	}
	in := interpolator{getenv: a.getenv, dir: c.dir, errAt: c.errAt}
	if err := in.walk(section, "ship"); err != nil {
		return nil, err
	}
	if err := section.Decode(fs); err != nil {
		return nil, c.errAt(section.Line, "ship: %s", strings.ReplaceAll(strings.TrimPrefix(err.Error(), "yaml: unmarshal errors:\n  "), "\n  ", "; "))
	}
	return c, nil
}

// applyShipFile overlays the keys the file gave on cfg; relative local paths are relative to
// the file's directory.
func applyShipFile(cfg *ship.Config, fs fileShip, c *exportConfig) {
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	if fs.Spool != "" {
		cfg.Spool = c.localPath(fs.Spool)
	}
	if fs.To != "" {
		cfg.To = c.destination(fs.To)
	}
	set(&cfg.Pipeline, fs.Pipeline)
	set(&cfg.Node, fs.Node)
	set(&cfg.Listen, fs.Listen)
	if fs.UploadConcurrency != 0 {
		cfg.UploadConcurrency = fs.UploadConcurrency
	}
	if fs.MultipartThreshold != 0 {
		cfg.MultipartThreshold = int64(fs.MultipartThreshold)
	}
	if fs.PartSize != 0 {
		cfg.PartSize = int64(fs.PartSize)
	}
	if fs.ConditionalPut != "" {
		cfg.ConditionalPut = ship.PutMode(fs.ConditionalPut)
	}
	if fs.Retry.Initial != 0 {
		cfg.Retry.Initial = fs.Retry.Initial
	}
	if fs.Retry.Max != 0 {
		cfg.Retry.Max = fs.Retry.Max
	}
	if fs.Retry.Jitter != nil {
		cfg.Retry.Jitter = *fs.Retry.Jitter
	}
	if fs.LocalRetention.Mode != "" {
		cfg.Retention.Mode = ship.RetentionMode(fs.LocalRetention.Mode)
	}
	if fs.LocalRetention.KeepFor != 0 {
		cfg.Retention.KeepFor = fs.LocalRetention.KeepFor
	}
	if fs.Grace != nil {
		cfg.Grace = *fs.Grace
	}
	if fs.PollInterval != 0 {
		cfg.PollInterval = fs.PollInterval
	}
	cfg.ListenRemote = cfg.ListenRemote || fs.ListenRemote
	cfg.Drain = cfg.Drain || fs.Drain
}

// applyShipFlags overlays the flags given on the command line.
func applyShipFlags(cfg *ship.Config, fl *pflag.FlagSet, f *shipFlags) error {
	changed := func(name string) bool { return fl.Changed(name) }
	strs := map[string]*string{"spool": &cfg.Spool, "to": &cfg.To, "pipeline": &cfg.Pipeline, "node": &cfg.Node, "listen": &cfg.Listen}
	vals := map[string]string{"spool": f.cfg.Spool, "to": f.cfg.To, "pipeline": f.cfg.Pipeline, "node": f.cfg.Node, "listen": f.cfg.Listen}
	for _, name := range slices.Sorted(maps.Keys(strs)) {
		if changed(name) {
			*strs[name] = vals[name]
		}
	}
	if changed("spool") {
		abs, err := filepath.Abs(cfg.Spool)
		if err == nil {
			cfg.Spool = abs
		}
	}
	if changed("upload-concurrency") {
		cfg.UploadConcurrency = f.cfg.UploadConcurrency
	}
	for name, dst := range map[string]*int64{"multipart-threshold": &cfg.MultipartThreshold, "part-size": &cfg.PartSize} {
		if !changed(name) {
			continue
		}
		v := map[string]string{"multipart-threshold": f.threshold, "part-size": f.partSize}[name]
		n, err := ship.ParseSize(v)
		if err != nil {
			return usageErr(fmt.Errorf("ship: --%s: %v", name, err))
		}
		*dst = n
	}
	if changed("conditional-put") {
		cfg.ConditionalPut = ship.PutMode(f.putMode)
	}
	if changed("retry-initial") {
		cfg.Retry.Initial = f.cfg.Retry.Initial
	}
	if changed("retry-max") {
		cfg.Retry.Max = f.cfg.Retry.Max
	}
	if changed("retry-jitter") {
		cfg.Retry.Jitter = f.cfg.Retry.Jitter
	}
	if changed("retention") {
		cfg.Retention.Mode = ship.RetentionMode(f.retention)
	}
	if changed("keep-for") {
		d, err := time.ParseDuration(f.keepFor)
		if err != nil {
			return usageErr(fmt.Errorf("ship: --keep-for %q: want a duration such as 30m", f.keepFor))
		}
		cfg.Retention.KeepFor = d
	}
	if changed("grace") {
		cfg.Grace = f.cfg.Grace
	}
	if changed("poll-interval") {
		cfg.PollInterval = f.cfg.PollInterval
	}
	cfg.ListenRemote = cfg.ListenRemote || f.cfg.ListenRemote
	cfg.Drain = cfg.Drain || f.cfg.Drain
	return nil
}

// checkShipStore applies the store's own checks (endpoint rules, credential references and
// combinations) before anything is opened.
func checkShipStore(cfg ship.Config) error {
	loc, err := store.ParseURL(cfg.To)
	if err != nil {
		return err
	}
	sc := cfg.Store
	if err := sc.ApplyQuery(loc); err != nil {
		return err
	}
	return sc.Check(loc)
}
