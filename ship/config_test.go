package ship

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wharfdata/wharf/spool"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
)

func validConfig() Config {
	c := DefaultConfig()
	c.Spool, c.To, c.Pipeline, c.Node = "/tmp/spool", "s3://bucket/prefix", "edge", "gw-17"
	return c
}

func TestConfigCheck(t *testing.T) {
	if err := func() *Config { c := validConfig(); return &c }().Check(); err != nil {
		t.Fatalf("the defaults with the required keys: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string // in the message
	}{
		{"no spool", func(c *Config) { c.Spool = "" }, "spool: required"},
		{"no destination", func(c *Config) { c.To = "" }, "to: required"},
		{"stdout", func(c *Config) { c.To = "-" }, "standard output"},
		{"pipeline with a slash", func(c *Config) { c.Pipeline = "a/b" }, `pipeline "a/b"`},
		{"pipeline dot-dot", func(c *Config) { c.Pipeline = ".." }, `pipeline ".."`},
		{"empty node", func(c *Config) { c.Node = "" }, `node ""`},
		{"node with a space", func(c *Config) { c.Node = "gw 17" }, `node "gw 17"`},
		{"part size below 5 MiB", func(c *Config) { c.PartSize = 4 << 20 }, "part_size 4MiB: want 5MiB to 5GiB"},
		{"part size above 5 GiB", func(c *Config) { c.PartSize = 6 << 30 }, "part_size 6GiB"},
		{"threshold above 5 GiB", func(c *Config) { c.MultipartThreshold = 6 << 30 }, "multipart_threshold 6GiB"},
		{"no concurrency", func(c *Config) { c.UploadConcurrency = 0 }, "upload_concurrency 0"},
		{"unknown put mode", func(c *Config) { c.ConditionalPut = "always" }, `conditional_put "always"`},
		{"retry max below initial", func(c *Config) { c.Retry.Max = time.Millisecond }, "retry.max 1ms"},
		{"zero initial retry", func(c *Config) { c.Retry.Initial = 0 }, "retry.initial 0s"},
		{"unknown retention", func(c *Config) { c.Retention.Mode = "forever" }, `local_retention.mode "forever"`},
		{"keep_for without a time", func(c *Config) { c.Retention = Retention{Mode: KeepFor} }, "local_retention.keep_for 0s"},
		{"listen on every interface", func(c *Config) { c.Listen = "0.0.0.0:9464" }, "not a loopback address"},
		{"listen without a port", func(c *Config) { c.Listen = "127.0.0.1" }, "want host:port"},
		{"negative grace", func(c *Config) { c.Grace = -time.Second }, "grace -1s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := validConfig()
			tc.edit(&c)
			err := c.Check()
			if !errors.Is(err, store.ErrConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Check() = %v; want WHARF_CONFIG_INVALID saying %q", err, tc.want)
			}
		})
	}
	c := validConfig()
	c.To = "ftp://host/x"
	if err := c.Check(); !errors.Is(err, driver.ErrEndpointUnsupported) {
		t.Errorf("an ftp destination: %v, want WHARF_ENDPOINT_UNSUPPORTED", err)
	}
	for _, ok := range []func(*Config){
		func(c *Config) { c.Listen = ListenOff },
		func(c *Config) { c.Listen = "[::1]:0" },
		func(c *Config) { c.Listen = "localhost:9464" },
		func(c *Config) { c.Listen, c.ListenRemote = "0.0.0.0:9464", true },
		func(c *Config) { c.Retention = Retention{Mode: Keep} },
		func(c *Config) { c.Retention.Mode = KeepFor },
		func(c *Config) { c.PartSize, c.MultipartThreshold = MinPartSize, 0 },
	} {
		c := validConfig()
		ok(&c)
		if err := c.Check(); err != nil {
			t.Errorf("Check(%+v) = %v, want nil", c, err)
		}
	}
}

func TestRetryDelay(t *testing.T) {
	r := Retry{Initial: time.Second, Max: 60 * time.Second}
	want := []time.Duration{1, 2, 4, 8, 16, 32, 60, 60, 60}
	for i, w := range want {
		if got := r.Delay(i+1, nil); got != w*time.Second {
			t.Errorf("retry %d: %s, want %s", i+1, got, w*time.Second)
		}
	}
	if got := r.Delay(1000, nil); got != 60*time.Second {
		t.Errorf("retry 1000: %s, want the max", got)
	}
	r.Jitter = true
	for _, draw := range []float64{0, 0.5, 0.999} {
		for n := 1; n <= 8; n++ {
			full := Retry{Initial: r.Initial, Max: r.Max}.Delay(n, nil)
			got := r.Delay(n, func() float64 { return draw })
			if got < full/2 || got > full {
				t.Errorf("retry %d with draw %v: %s, want within [%s, %s]", n, draw, got, full/2, full)
			}
		}
	}
	if lo, hi := r.Delay(3, func() float64 { return 0 }), r.Delay(3, func() float64 { return 0.99 }); lo != 2*time.Second || hi <= lo {
		t.Errorf("jitter at retry 3: draw 0 gives %s, draw 0.99 gives %s; want 2s and more", lo, hi)
	}
}

func TestObjectKey(t *testing.T) {
	f := spool.File{ID: 7, Dataset: "events", First: 7, Last: 9, Ext: "ndjson.gz", SHA256: "ABCDEF",
		Time: time.Date(2026, 3, 4, 5, 6, 7, 0, time.FixedZone("x", 2*3600))}
	got := ObjectKey("edge", "gw-17", 0x0123456789abcdef, f)
	want := "wharf/v1/edge/events/date=2026-03-04/hour=03/gw-17_0123456789abcdef_00000000000000000007_00000000000000000009.ndjson.gz"
	if got != want {
		t.Errorf("ObjectKey:\n got %s\nwant %s", got, want)
	}
	if err := store.ValidateKey("put", got); err != nil {
		t.Errorf("the key is not a valid store key: %v", err)
	}
	// A file whose clock was not synchronized has no partition: unsynced/ instead. An
	// unknown clock (a record from before wharf recorded it) keeps the partition.
	unsynced, unknown := f, f
	unsynced.Clock, unknown.Clock = spool.ClockUnsynced, spool.ClockUnknown
	for _, c := range []struct{ name, got, want string }{
		{"unsynced", ObjectKey("edge", "gw-17", 0x0123456789abcdef, unsynced),
			"wharf/v1/edge/events/unsynced/gw-17_0123456789abcdef_00000000000000000007_00000000000000000009.ndjson.gz"},
		{"unknown", ObjectKey("edge", "gw-17", 0x0123456789abcdef, unknown), want},
		{"replay", ReplayKey("fix-1", "edge", "gw-17", 0x0123456789abcdef, f),
			"wharf/replays/fix-1/v1/edge/events/date=2026-03-04/hour=03/gw-17_0123456789abcdef_00000000000000000007_00000000000000000009.ndjson.gz"},
		{"replay, unsynced", ReplayKey("fix-1", "edge", "gw-17", 0x0123456789abcdef, unsynced),
			"wharf/replays/fix-1/v1/edge/events/unsynced/gw-17_0123456789abcdef_00000000000000000007_00000000000000000009.ndjson.gz"},
	} {
		if c.got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, c.got, c.want)
		}
		if strings.HasPrefix(c.name, "replay") && strings.HasPrefix(c.got, KeyRoot+"/") {
			t.Errorf("%s: %s is under the production root %s/", c.name, c.got, KeyRoot)
		}
	}
	md := Metadata("gw-17", f)
	for k, v := range map[string]string{"wharf-sha256": "abcdef", "wharf-range": "7-9", "wharf-dataset": "events", "wharf-node": "gw-17"} {
		if md[k] != v {
			t.Errorf("metadata %s = %q, want %q", k, md[k], v)
		}
	}
	if err := driver.ValidateMetadata("put", got, md); err != nil {
		t.Errorf("metadata not valid for the store: %v", err)
	}
	for _, bad := range []spool.File{{Dataset: "a/b", Ext: "x"}, {Dataset: "ok", Ext: "a/b"}, {Dataset: "..", Ext: "x"}} {
		if err := checkFile(bad); err == nil {
			t.Errorf("checkFile(%+v) accepted it", bad)
		}
	}
	if ct := contentType("ndjson.gz"); ct != "application/gzip" {
		t.Errorf("contentType(ndjson.gz) = %q", ct)
	}
	if ct := contentType("parquet"); ct != "application/vnd.apache.parquet" {
		t.Errorf("contentType(parquet) = %q", ct)
	}
}

func TestBudget(t *testing.T) {
	b := make(budget, 3)
	n, err := b.acquire(t.Context(), 5)
	if err != nil || n != 3 {
		t.Fatalf("acquire(5) of 3 free = %d, %v; want 3", n, err)
	}
	ctx, cancel := contextWithTimeout(t, 20*time.Millisecond)
	defer cancel()
	if _, err := b.acquire(ctx, 1); err == nil {
		t.Fatal("acquire with no buffer free returned before its context ended")
	}
	b.release(2)
	if n, _ := b.acquire(t.Context(), 1); n != 1 {
		t.Errorf("acquire(1) = %d", n)
	}
	if n, _ := b.acquire(t.Context(), 4); n != 1 {
		t.Errorf("acquire(4) with one free = %d, want 1", n)
	}
	if got := partsOf(17<<20, 5<<20); got != 4 {
		t.Errorf("partsOf(17 MiB, 5 MiB) = %d", got)
	}
}
