package ship

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/wharfdata/wharf/internal/bytesize"
	"github.com/wharfdata/wharf/internal/listen"
	"github.com/wharfdata/wharf/store"
)

// PutMode is how uploads guard their key (Config.ConditionalPut).
type PutMode string

// The put modes.
const (
	// PutAuto is PutCreate where the startup probe proved conditional create, PutOverwrite
	// elsewhere.
	PutAuto PutMode = "auto"
	// PutCreate sends every upload as create-if-absent; the service refuses to start on a
	// store that does not enforce it.
	PutCreate PutMode = "create"
	// PutOverwrite sends plain puts, checking the key by HEAD before and verifying it after:
	// a collision is caught, but only after the fact if another writer races.
	PutOverwrite PutMode = "overwrite"
)

// RetentionMode says what happens to a local file once its upload is recorded.
type RetentionMode string

// The retention modes.
const (
	DeleteAfterUpload RetentionMode = "delete_after_upload" // remove it at once
	KeepFor           RetentionMode = "keep_for"            // remove it Retention.KeepFor after the upload
	Keep              RetentionMode = "keep"                // never remove it
)

// Size limits of S3-style multipart uploads, which part_size must respect.
const (
	MinPartSize = 5 << 20
	MaxPartSize = 5 << 30
)

// ListenOff disables the HTTP endpoints.
const ListenOff = listen.Off

// Retry is the per-file backoff: before retry n (n ≥ 1) the service waits
// min(Initial·2^(n-1), Max), drawn uniformly from its upper half when Jitter is set. Attempts
// never run out.
type Retry struct {
	Initial time.Duration `yaml:"initial" help:"first wait before retrying a file"`
	Max     time.Duration `yaml:"max" help:"longest wait between retries of a file"`
	Jitter  bool          `yaml:"jitter" help:"draw each wait from the upper half of its range"`
}

// Delay returns the wait before retry n (n ≥ 1). rnd returns a uniform draw in [0, 1).
func (r Retry) Delay(n int, rnd func() float64) time.Duration {
	d := r.Initial
	for i := 1; i < n && d < r.Max; i++ {
		d *= 2
	}
	d = min(d, r.Max)
	if r.Jitter && d > 0 {
		d = d/2 + time.Duration(rnd()*float64(d/2))
	}
	return d
}

// Retention is the local retention policy.
type Retention struct {
	Mode RetentionMode `yaml:"mode" flag:"retention" help:"local retention: delete_after_upload, keep_for or keep"`
	// KeepFor is, with KeepFor, how long after the upload the file stays.
	KeepFor time.Duration `yaml:"keep_for" flag:"keep-for" help:"with --retention keep_for: how long a file stays after its upload"`
}

// Config configures the ship service: the ship: section of wharf's config file. Each field
// declares its key, flag, help and unit in its tags (internal/yamlconf's Option): every key
// but the store's options is also a flag of `wharf ship`. DefaultConfig gives every default,
// FromEnv the environment's, Check validates.
type Config struct {
	Spool    string `yaml:"spool" help:"the spool directory (made by 'wharf spool init DIR')"`
	To       string `yaml:"to" help:"the destination URL: s3://bucket/prefix, gs://…, az://…, ./dir"`
	Pipeline string `yaml:"pipeline" help:"the pipeline name, written into every key"`
	Node     string `yaml:"node" help:"this machine's id, written into every key" default:"$WHARF_NODE_ID"`
	// Replay is the id of the replay the spool holds (spool.InitOptions.Replay): every key
	// goes under wharf/replays/{Replay}/ (ReplayKey). "" ships a production spool. Run
	// refuses a spool whose replay id is another (ErrReplayIntoProduction, ErrReplayMismatch).
	Replay string `yaml:"replay" help:"ship the replay spool of this replay id, every key under wharf/replays/ID/ (refused on any other spool)"`

	UploadConcurrency  int   `yaml:"upload_concurrency" help:"files uploaded at once (also the parts in flight across all multipart uploads)"`
	MultipartThreshold int64 `yaml:"multipart_threshold" unit:"bytes" help:"files above this size go multipart"`
	PartSize           int64 `yaml:"part_size" unit:"bytes" help:"multipart part size, 5MiB to 5GiB"`

	ConditionalPut PutMode   `yaml:"conditional_put" help:"auto, create or overwrite"`
	Retry          Retry     `yaml:"retry"`
	Retention      Retention `yaml:"local_retention"`

	Grace        time.Duration `yaml:"grace" help:"after SIGTERM, how long uploads in flight may finish"`
	PollInterval time.Duration `yaml:"poll_interval" help:"how often the spool's catalog is re-read for new files"`
	Listen       string        `yaml:"listen" help:"address of the status page (/), /metrics, /status and /healthz (loopback unless --listen-remote; off for none)"`
	ListenRemote bool          `yaml:"listen_remote" help:"allow a --listen address that is not loopback"`
	// Drain makes Run return once no file is waiting and none is in flight (for batch runs
	// and benchmarks); without it Run serves until its context ends.
	Drain bool `yaml:"drain" help:"exit once nothing is left to ship (a batch run), instead of serving until SIGTERM"`

	// Iceberg commits the shipped Parquet files of some datasets to an Iceberg table each
	// (Tables).
	Iceberg Tables `yaml:"iceberg"`

	// Store says how to open To: its backend's options (endpoint, region, credential
	// references…); ship's own part_size and upload_concurrency bound its uploads.
	Store store.Config `yaml:"store" flag:"-"`
}

// EnvNodeID names this machine when neither the config nor a flag does.
const EnvNodeID = "WHARF_NODE_ID"

// FromEnv takes the defaults the environment gives: the node id from WHARF_NODE_ID.
func (c *Config) FromEnv(getenv func(string) string) {
	if v := getenv(EnvNodeID); v != "" {
		c.Node = v
	}
}

// Rebase makes the local paths of c (the spool, and a local destination) absolute against
// dir, the directory of the config file that gave them.
func (c *Config) Rebase(dir string) {
	if c.Spool != "" && !filepath.IsAbs(c.Spool) {
		c.Spool = filepath.Join(dir, c.Spool)
	}
	if c.Iceberg.Catalog != nil {
		c.Iceberg.Catalog.Rebase(dir)
	}
	scheme, _, hasScheme := strings.Cut(c.To, "://")
	isURL := hasScheme && scheme != "" && !strings.ContainsAny(scheme, "/.\\")
	if !isURL && c.To != "" && c.To != "-" && !filepath.IsAbs(c.To) {
		abs := filepath.Join(dir, c.To)
		if strings.HasSuffix(c.To, "/") {
			abs += "/"
		}
		c.To = abs
	}
}

// DefaultConfig returns the defaults: 2 uploads in flight, multipart above 32 MiB in 8 MiB
// parts, conditional_put auto, retry from 1 s to 60 s with jitter, delete after upload (with
// keep_for 30m when that mode is chosen), a 30 s grace, the catalog re-read every second, and
// the HTTP endpoints on 127.0.0.1:9464.
func DefaultConfig() Config {
	return Config{
		UploadConcurrency:  2,
		MultipartThreshold: 32 << 20,
		PartSize:           8 << 20,
		ConditionalPut:     PutAuto,
		Retry:              Retry{Initial: time.Second, Max: 60 * time.Second, Jitter: true},
		Retention:          Retention{Mode: DeleteAfterUpload, KeepFor: 30 * time.Minute},
		Grace:              30 * time.Second,
		PollInterval:       time.Second,
		Listen:             "127.0.0.1:9464",
		Iceberg:            Tables{CommitInterval: defaultCommitInterval, CommitFiles: defaultCommitFiles},
	}
}

// segment is a safe key segment: a letter or digit, then letters, digits, '.', '_', '-'.
var segment = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// CheckSegment reports whether v is usable as the named key segment (pipeline, node,
// dataset): 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit.
func CheckSegment(field, v string) error {
	if !segment.MatchString(v) {
		return fmt.Errorf("%s %q: want 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit", field, v)
	}
	return nil
}

// Check validates c. A failure is store.ErrConfig naming the field (the config key).
func (c *Config) Check() error {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	if c.Spool == "" {
		add(errors.New("spool: required (the spool directory; make one with `wharf spool init DIR`)"))
	}
	if c.To == "" {
		add(errors.New("to: required (the destination URL, such as s3://bucket/prefix)"))
	} else if strings.HasPrefix(c.To, "stdout:") || c.To == "-" {
		add(errors.New("to: standard output cannot hold objects: give a store URL"))
	} else if err := store.Check(c.To, &c.Store); err != nil {
		return err
	}
	add(CheckSegment("pipeline", c.Pipeline))
	add(CheckSegment("node", c.Node))
	if c.Replay != "" {
		add(CheckSegment("replay", c.Replay))
	}
	if c.UploadConcurrency < 1 || c.UploadConcurrency > 256 {
		add(fmt.Errorf("upload_concurrency %d: want 1 to 256", c.UploadConcurrency))
	}
	if c.PartSize < MinPartSize || c.PartSize > MaxPartSize {
		add(fmt.Errorf("part_size %s: want 5MiB to 5GiB (the multipart part limits)", bytesize.Format(c.PartSize)))
	}
	if c.MultipartThreshold < 0 || c.MultipartThreshold > MaxPartSize {
		add(fmt.Errorf("multipart_threshold %s: want 0 to 5GiB (the largest single put)", bytesize.Format(c.MultipartThreshold)))
	}
	switch c.ConditionalPut {
	case PutAuto, PutCreate, PutOverwrite:
	default:
		add(fmt.Errorf("conditional_put %q: want auto, create or overwrite", c.ConditionalPut))
	}
	add(c.checkRetry())
	add(c.checkRetention())
	if c.Grace < 0 {
		add(fmt.Errorf("grace %s: want 0 or more", c.Grace))
	}
	if c.PollInterval <= 0 {
		add(fmt.Errorf("poll_interval %s: want more than 0", c.PollInterval))
	}
	add(c.checkListen())
	errs = append(errs, c.Iceberg.check(c.Replay)...)
	if len(errs) == 0 {
		return nil
	}
	return &store.Error{Op: "config", Kind: store.ErrConfig, Err: errors.Join(errs...)}
}

func (c *Config) checkRetry() error {
	r := c.Retry
	switch {
	case r.Initial <= 0:
		return fmt.Errorf("retry.initial %s: want more than 0", r.Initial)
	case r.Max < r.Initial:
		return fmt.Errorf("retry.max %s: want at least retry.initial (%s)", r.Max, r.Initial)
	}
	return nil
}

func (c *Config) checkRetention() error {
	switch c.Retention.Mode {
	case DeleteAfterUpload, Keep:
		return nil
	case KeepFor:
		if c.Retention.KeepFor <= 0 {
			return fmt.Errorf("local_retention.keep_for %s: want more than 0 with mode keep_for", c.Retention.KeepFor)
		}
		return nil
	}
	return fmt.Errorf("local_retention.mode %q: want delete_after_upload, keep_for or keep", c.Retention.Mode)
}

func (c *Config) checkListen() error {
	return listen.Check(c.Listen, c.ListenRemote, "127.0.0.1:9464")
}

// MemoryBound is the soft limit on the Go heap the service of c runs under: the part buffers
// (upload_concurrency of part_size) are pooled and stay live, and a limit below the
// documented bound (their size + 64 MiB) makes the collector reclaim the garbage around them
// before the heap grows past it; it costs nothing below it.
func (c Config) MemoryBound() int64 { return int64(c.UploadConcurrency)*c.PartSize + 40<<20 }
