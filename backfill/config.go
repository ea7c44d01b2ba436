package backfill

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/wharfdata/wharf/internal/bytesize"
	"github.com/wharfdata/wharf/internal/listen"
	"github.com/wharfdata/wharf/lease"
	"github.com/wharfdata/wharf/store"
)

// The coordinators Config.Coordinator names; a nats:// or tls:// URL names NATS JetStream.
const (
	CoordinatorBucket = "bucket" // the source's bucket (or CoordinatorStore), through conditional writes
	CoordinatorSolo   = "solo"   // in this process only: a restart replays the prefix
)

// Compression modes (Config.Compression).
const (
	CompressionAuto = "auto" // by extension (.gz, .gzip, .zst, .zstd), else by magic bytes
	CompressionNone = "none"
	CompressionGzip = "gzip"
	CompressionZstd = "zstd"
)

// ListenOff disables the HTTP endpoints.
const ListenOff = listen.Off

// EnvNodeID names this worker when neither the config nor a flag does.
const EnvNodeID = "WHARF_NODE_ID"

// Config configures a backfill: the backfill: section of wharf's config file. Each field
// declares its key, flag, help and unit in its tags (internal/yamlconf's Option): every key is
// also a flag of `wharf backfill` but those tagged flag:"-" (the source, which is the
// command's argument, the NATS credentials and the stores' options). DefaultConfig gives
// every default, FromEnv the environment's, Check validates.
type Config struct {
	// Source is the prefix to read: s3://bucket/prefix/, gs://…, ./dir (the command's argument).
	Source string `yaml:"source" flag:"-"`
	To     string `yaml:"to" help:"the sink: - (standard output) or a store URL for parts, a manifest and _SUCCESS"`
	// Job names the job in the coordinator; "" derives it from Source and To, so the same
	// command started on several machines shares one job.
	Job string `yaml:"job" help:"the job's name in the coordinator" default:"derived from the source and --to"`
	// Coordinator is bucket, solo, or a NATS URL (nats://host:port, several separated by
	// commas).
	Coordinator string `yaml:"coordinator" help:"bucket, solo, or nats://HOST:PORT (several separated by commas)"`
	// CoordinatorStore is the store URL whose _wharf/backfill/<job>/ holds the job with the
	// bucket coordinator; "" is the root of the source's bucket.
	CoordinatorStore string `yaml:"coordinator_store" help:"with --coordinator bucket: the store URL that holds _wharf/backfill/<job>/" default:"the source's bucket"`
	// Node is this worker's id; "" is WHARF_NODE_ID, else host-pid.
	Node string `yaml:"node" help:"this worker's id, one per live worker" default:"$WHARF_NODE_ID, else host-pid"`

	MaxInFlight     int    `yaml:"max_in_flight" help:"splits this worker reads at once"`
	SplitBytes      int64  `yaml:"split_bytes" unit:"bytes" help:"target size of a split (an object larger is a split alone)"`
	SplitMaxObjects int    `yaml:"split_max_objects" help:"most objects in a split"`
	MaxRecordBytes  int64  `yaml:"max_record_bytes" unit:"bytes" help:"a longer record is corruption"`
	MaxAttempts     int    `yaml:"max_attempts" help:"failures of an object before it is quarantined (its split goes on without it)"`
	ReadWindow      int64  `yaml:"read_window" unit:"bytes" help:"memory per split: ranges read ahead, plus about 6MiB to decode"`
	ReadRequest     int64  `yaml:"read_request" unit:"bytes" help:"largest ranged GET"`
	ReadConcurrency int    `yaml:"read_concurrency" help:"ranged GETs in flight per split"`
	Compression     string `yaml:"compression" help:"auto (by extension or magic bytes), none, gzip or zstd"`

	// LeaseTTL is the TTL of the job's leases (each split's, the leader's, each node id's): a
	// lease its holder has not renewed for LeaseTTL + LeaseSkew() (LeaseTTL/5) is taken over,
	// and a holder stops LeaseTTL − LeaseSkew() after its last successful write.
	LeaseTTL       time.Duration `yaml:"lease_ttl" help:"the TTL of the job's leases: a split not renewed for it and a fifth more (the skew bound) is taken over by another worker"`
	CommitInterval time.Duration `yaml:"commit_interval" help:"how often standard output's watermark is committed (the records its reader took by then)"`
	PollInterval   time.Duration `yaml:"poll_interval" help:"how often an idle worker looks for work"`

	Listen       string `yaml:"listen" help:"address of the status page (/), /metrics, /status and /healthz (loopback unless --listen-remote; off for none)"`
	ListenRemote bool   `yaml:"listen_remote" help:"allow a --listen address that is not loopback"`

	NATS NATSConfig `yaml:"nats"`

	// Store and ToStore say how to open Source and To: their backend's options (endpoint,
	// region, credential references…).
	Store   store.Config `yaml:"store" flag:"-"`
	ToStore store.Config `yaml:"to_store" flag:"-"`
}

// NATSConfig are the options of the NATS coordinator.
type NATSConfig struct {
	// Replicas of the job's key-value bucket; 0 is 3 on a cluster, 1 on a single server.
	Replicas int    `yaml:"replicas" help:"replicas of the job's NATS key-value bucket (0: 3 on a cluster, else 1)"`
	User     string `yaml:"user" flag:"-"`
	Password string `yaml:"password" secret:"ref" flag:"-"` // env://NAME or file:///path
	Token    string `yaml:"token" secret:"ref" flag:"-"`    // env://NAME or file:///path
}

// DefaultConfig returns the defaults: the bucket coordinator, 4 splits in flight, splits of
// 64 MiB and at most 1,000 objects, records up to 1 MiB, 3 attempts, a 16 MiB read window
// per split in GETs of at most 4 MiB, 8 at once, a 30 s lease, commits every 5 s, a 1 s poll,
// no HTTP endpoints.
func DefaultConfig() Config {
	return Config{
		Coordinator:     CoordinatorBucket,
		MaxInFlight:     4,
		SplitBytes:      64 << 20,
		SplitMaxObjects: 1000,
		MaxRecordBytes:  1 << 20,
		MaxAttempts:     3,
		ReadWindow:      16 << 20,
		ReadRequest:     4 << 20,
		ReadConcurrency: 8,
		Compression:     CompressionAuto,
		LeaseTTL:        30 * time.Second,
		CommitInterval:  5 * time.Second,
		PollInterval:    time.Second,
		Listen:          ListenOff,
	}
}

// FromEnv takes the defaults the environment gives: the node id from WHARF_NODE_ID.
func (c *Config) FromEnv(getenv func(string) string) {
	if v := getenv(EnvNodeID); v != "" {
		c.Node = v
	}
}

// MaxMembers is the largest SplitMaxObjects: a member's ordinal must fit an offset.
const MaxMembers = 1 << 20

var (
	jobPattern  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)
	nodePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
)

// Check validates c. A failure is ErrConfig naming every key at fault.
func (c *Config) Check() error {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	if err := c.checkURLs(add); err != nil {
		return err
	}
	if c.Job != "" && !jobPattern.MatchString(c.Job) {
		add(fmt.Errorf("job %q: want 1 to 64 letters, digits, '_' or '-', starting with a letter or digit", c.Job))
	}
	if c.Node != "" && !nodePattern.MatchString(c.Node) {
		add(fmt.Errorf("node %q: want 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit", c.Node))
	}
	add(c.checkCoordinator())
	add(c.checkSizes())
	add(c.checkTimes())
	switch c.Compression {
	case CompressionAuto, CompressionNone, CompressionGzip, CompressionZstd:
	default:
		add(fmt.Errorf("compression %q: want auto, none, gzip or zstd", c.Compression))
	}
	add(c.checkListen())
	if len(errs) == 0 {
		return nil
	}
	return configErr("%w", errors.Join(errs...))
}

// checkURLs checks the source and the sink. A store option mistake keeps its own code. That
// the sink is apart from the source is checked once both are open (Apart): only then is it
// known whether they are one store.
func (c *Config) checkURLs(add func(error)) error {
	if c.Source == "" {
		add(errors.New("source: required (the prefix to read, such as s3://bucket/logs/)"))
	} else if IsStdout(c.Source) {
		add(errors.New("source: standard output cannot be read: give a store URL"))
	} else if err := store.Check(c.Source, &c.Store); err != nil {
		return err
	}
	switch {
	case c.To == "":
		add(errors.New("to: required (- for standard output, or a store URL)"))
	case IsStdout(c.To):
	default:
		if err := store.Check(c.To, &c.ToStore); err != nil {
			return err
		}
	}
	return nil
}

// IsStdout reports whether a sink URL names standard output.
func IsStdout(u string) bool { return u == "-" || strings.HasPrefix(u, "stdout:") }

func (c *Config) checkCoordinator() error {
	switch c.Coordinator {
	case CoordinatorBucket, CoordinatorSolo:
		return nil
	}
	hosts, err := NATSServers(c.Coordinator)
	if err != nil {
		return err
	}
	secret := c.NATS.Password != "" || c.NATS.Token != ""
	for _, h := range hosts {
		if secret && h.plain && !listen.Loopback(h.host) {
			return fmt.Errorf("coordinator %q: nats:// is plaintext and %s is not this machine: use tls:// so the NATS password or token is not sent in the clear", c.Coordinator, h.host)
		}
	}
	if c.NATS.Replicas < 0 || c.NATS.Replicas > 5 {
		return fmt.Errorf("nats.replicas %d: want 0 (automatic) to 5", c.NATS.Replicas)
	}
	return nil
}

type natsHost struct {
	host  string
	plain bool
}

// NATSServers parses a NATS coordinator URL list (nats://h:p,nats://h2:p2). It is an error
// for anything else than bucket or solo that is not such a list.
func NATSServers(v string) ([]natsHost, error) {
	var out []natsHost
	for part := range strings.SplitSeq(v, ",") {
		u, err := url.Parse(strings.TrimSpace(part))
		if err != nil || (u.Scheme != "nats" && u.Scheme != "tls") || u.Host == "" || u.User != nil {
			return nil, fmt.Errorf("coordinator %q: want bucket, solo, or nats://host:port (tls://host:port; several separated by commas; no user:password@ — use nats.user and nats.password)", v)
		}
		out = append(out, natsHost{host: u.Hostname(), plain: u.Scheme == "nats"})
	}
	return out, nil
}

// IsNATS reports whether the coordinator is NATS.
func (c *Config) IsNATS() bool {
	return c.Coordinator != CoordinatorBucket && c.Coordinator != CoordinatorSolo
}

func (c *Config) checkSizes() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if c.MaxInFlight < 1 || c.MaxInFlight > 256 {
		bad("max_in_flight %d: want 1 to 256", c.MaxInFlight)
	}
	if c.SplitBytes < 1<<20 {
		bad("split_bytes %s: want at least 1MiB", bytesize.Format(c.SplitBytes))
	}
	if c.SplitMaxObjects < 1 || c.SplitMaxObjects > MaxMembers {
		bad("split_max_objects %d: want 1 to %d", c.SplitMaxObjects, MaxMembers)
	}
	if c.MaxRecordBytes < 1<<10 || c.MaxRecordBytes > 256<<20 {
		bad("max_record_bytes %s: want 1KiB to 256MiB", bytesize.Format(c.MaxRecordBytes))
	}
	if c.MaxAttempts < 1 || c.MaxAttempts > 100 {
		bad("max_attempts %d: want 1 to 100", c.MaxAttempts)
	}
	if c.ReadRequest < 64<<10 {
		bad("read_request %s: want at least 64KiB", bytesize.Format(c.ReadRequest))
	}
	if c.ReadWindow < c.ReadRequest {
		bad("read_window %s: want at least read_request (%s)", bytesize.Format(c.ReadWindow), bytesize.Format(c.ReadRequest))
	}
	if c.ReadConcurrency < 1 || c.ReadConcurrency > 64 {
		bad("read_concurrency %d: want 1 to 64", c.ReadConcurrency)
	}
	return errors.Join(errs...)
}

func (c *Config) checkTimes() error {
	switch {
	case c.LeaseTTL < time.Second || c.LeaseTTL > lease.MaxTTL:
		return fmt.Errorf("lease_ttl %s: want at least 1s and at most %s", c.LeaseTTL, lease.MaxTTL)
	case c.CommitInterval <= 0 || c.CommitInterval > c.LeaseTTL:
		return fmt.Errorf("commit_interval %s: want more than 0 and at most lease_ttl (%s)", c.CommitInterval, c.LeaseTTL)
	case c.PollInterval <= 0 || c.PollInterval > c.LeaseTTL:
		return fmt.Errorf("poll_interval %s: want more than 0 and at most lease_ttl (%s)", c.PollInterval, c.LeaseTTL)
	}
	return nil
}

func (c *Config) checkListen() error {
	return listen.Check(c.Listen, c.ListenRemote, "127.0.0.1:9465")
}

// heapSlack is the Go heap allowed beyond the splits' read windows. A worker's resident
// memory is bounded by max_in_flight × read_window + 64 MiB: each split holds at most its
// window (ranges fetched ahead, its decoder, its batches), about 50 MiB of the rest are the
// executable's own pages (it links every backend's SDK, which the Go memory limit does not
// count), and the heap gets what is left.
const heapSlack = 12 << 20

// MemoryBound is the soft limit on the Go heap a worker of c runs under: the collector
// reclaims garbage before the heap grows past the splits' windows and the slack.
func (c Config) MemoryBound() int64 { return int64(c.MaxInFlight)*c.ReadWindow + heapSlack }
