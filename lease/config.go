package lease

import (
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/wharfdata/wharf/store"
)

// Coordination modes a config may ask for.
const (
	// CoordinationAuto takes a bucket lease where the probe proves the store cas, and a
	// machine lease on a file store the probe resolves single-writer (a network mount).
	CoordinationAuto = "auto"
	// CoordinationCAS requires a bucket lease: a store not proven cas fails
	// ErrCoordinationUnproven.
	CoordinationCAS = "cas"
)

// LocalNode is the default node id. It names no machine in particular, so it cannot take a
// bucket lease (ErrNodeIDLocal); it can take a machine lease.
const LocalNode = "local"

// EnvNodeID names this machine when neither the config nor a flag does.
const EnvNodeID = "WHARF_NODE_ID"

// Config is the lease: section of wharf's config file. Each field declares its key, flag,
// help and unit in its tags (internal/yamlconf's Option): every key is also a flag of `wharf
// lease`. DefaultConfig gives every default, FromEnv the environment's, Check validates.
type Config struct {
	// TTL is how long a lease is granted from each acquisition or renewal: at least 1 ms and at
	// most MaxTTL (7 days). The lease record keeps it in whole milliseconds, and a Leaser
	// counts on no more than the record says: it truncates the TTL to them. A TTL is how long a holder that died blocks everyone else, and no
	// job is served by a week; the bound also keeps every sum of a monotonic reading, a TTL,
	// the skew and a wait far inside time.Duration's 292 years, where a sum would wrap round.
	TTL time.Duration `yaml:"ttl" help:"how long an acquisition or renewal holds the lease (at most 168h)"`
	// RenewEvery is how long after its last successful write (an acquisition, renewal,
	// commit or save) the holding process renews; 0 means TTL/3.
	RenewEvery time.Duration `yaml:"renew_every" help:"how long after its last successful write the holding process renews" default:"TTL/3"`
	// Skew bounds how far two machines' clocks may run apart over one TTL: a contender takes
	// a lease over only TTL + Skew after it first saw its current version, and a holder stops
	// committing TTL − Skew after its last successful renewal.
	Skew time.Duration `yaml:"skew" help:"the bound on clock drift between machines over one TTL"`
	// Wait is how long an acquisition watches a held lease for it to expire or be released
	// before giving up with ErrHeld; 0 gives up at once.
	Wait time.Duration `yaml:"wait" help:"watch a held lease this long for it to expire or be released (at least TTL + skew to take over a dead holder's)"`
	// Node is this machine's id, written into the lease record and the log entries.
	Node string `yaml:"node" help:"this machine's id" default:"$WHARF_NODE_ID, else local"`
	// Coordination is CoordinationAuto or CoordinationCAS.
	Coordination string `yaml:"coordination" help:"auto (a machine lease on a network mount) or cas (require a bucket lease)"`
	// LockDir holds the lock files of machine leases; "" is wharf-leases in the system's
	// temporary directory.
	LockDir string `yaml:"lock_dir" help:"where machine leases keep their lock files" default:"the system's temporary directory"`
}

// DefaultConfig returns the defaults: a 10-minute TTL, renewed every TTL/3 (200 s), a 30 s
// skew bound, no wait, node id "local", coordination auto.
func DefaultConfig() Config {
	return Config{TTL: 10 * time.Minute, Skew: 30 * time.Second, Node: LocalNode, Coordination: CoordinationAuto}
}

// FromEnv takes the defaults the environment gives: the node id from WHARF_NODE_ID.
func (c *Config) FromEnv(getenv func(string) string) {
	if v := getenv(EnvNodeID); v != "" {
		c.Node = v
	}
}

// Renewal is how long after its last successful write the holder renews: RenewEvery, or
// TTL/3 when it is 0.
func (c *Config) Renewal() time.Duration {
	if c.RenewEvery > 0 {
		return c.RenewEvery
	}
	return c.TTL / 3
}

var nodePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// Check validates c. A failure is store.ErrConfig naming the key.
func (c *Config) Check() error {
	var errs []error
	add := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	switch {
	case c.TTL < time.Millisecond || c.TTL > MaxTTL:
		add("lease.ttl %s: want at least 1ms (the lease record keeps it in milliseconds) and at most %s (7 days: how long a holder that died blocks everyone)", c.TTL, MaxTTL)
	case c.Skew < 0 || c.Skew >= c.TTL:
		add("lease.skew %s: want 0 or more and less than lease.ttl (%s)", c.Skew, c.TTL)
	case c.RenewEvery < 0 || c.Renewal() <= 0 || c.Renewal() >= c.TTL-c.Skew:
		add("lease.renew_every %s: want more than 0 and less than lease.ttl − lease.skew (%s), so that a renewal comes before the holder must stop",
			c.Renewal(), c.TTL-c.Skew)
	}
	if c.Wait < 0 {
		add("lease.wait %s: want 0 or more", c.Wait)
	}
	if !nodePattern.MatchString(c.Node) {
		add("lease.node %q: want 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit (set %s)", c.Node, EnvNodeID)
	}
	switch c.Coordination {
	case CoordinationAuto, CoordinationCAS:
	default:
		add("lease.coordination %q: want auto or cas", c.Coordination)
	}
	if len(errs) == 0 {
		return nil
	}
	return &store.Error{Op: "config", Kind: store.ErrConfig, Err: errors.Join(errs...)}
}

var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// CheckName validates a lease name: 1 to 128 letters, digits, '.', '_' or '-', starting with
// a letter or digit (it is a key segment).
func CheckName(name string) error {
	if !namePattern.MatchString(name) {
		return &store.Error{Op: "lease", Key: name, Kind: store.ErrConfig,
			Err: fmt.Errorf("lease name %q: want 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit", name)}
	}
	return nil
}
