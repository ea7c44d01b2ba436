package ship

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wharfdata/wharf/spool"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
	"github.com/wharfdata/wharf/store/mem"
)

// fixture is a spool with files whose content the test knows.
type fixture struct {
	dir   string
	files []spool.File
	data  map[uint64][]byte
	rng   *rand.Rand
}

var eventTime = time.Date(2026, 11, 29, 13, 45, 0, 0, time.UTC)

func newFixture(t *testing.T, sizes ...int) *fixture {
	t.Helper()
	fx := &fixture{dir: filepath.Join(t.TempDir(), "spool"), data: map[uint64][]byte{}, rng: rand.New(rand.NewPCG(uint64(len(sizes)), 7))}
	if _, err := spool.Init(fx.dir); err != nil {
		t.Fatal(err)
	}
	for i, n := range sizes {
		fx.add(t, []string{"events", "metrics"}[i%2], n)
	}
	return fx
}

// add spools a file of n random bytes.
func (fx *fixture) add(t *testing.T, dataset string, n int) spool.File {
	t.Helper()
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(fx.rng.Uint32())
	}
	src := filepath.Join(t.TempDir(), fmt.Sprintf("f%d.ndjson", len(fx.files)))
	if err := os.WriteFile(src, b, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := spool.Add(t.Context(), fx.dir, src, spool.AddOptions{Dataset: dataset, Time: eventTime.Add(time.Duration(len(fx.files)) * time.Hour), Records: 3,
		Clock: spool.ClockSynced})
	if err != nil {
		t.Fatal(err)
	}
	fx.files = append(fx.files, f)
	fx.data[f.ID] = b
	return f
}

func (fx *fixture) epoch(t *testing.T) uint64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fx.dir, spool.MetaFile))
	if err != nil {
		t.Fatal(err)
	}
	var m struct{ Epoch string }
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var e uint64
	if _, err := fmt.Sscanf(m.Epoch, "%x", &e); err != nil {
		t.Fatal(err)
	}
	return e
}

func (fx *fixture) key(t *testing.T, cfg Config, f spool.File) string {
	return ObjectKey(cfg.Pipeline, cfg.Node, fx.epoch(t), f)
}

// config is a drain-mode config for fx with fast retries and polls.
func (fx *fixture) config(to string) Config {
	c := DefaultConfig()
	c.Spool, c.To, c.Pipeline, c.Node = fx.dir, to, "edge", "gw-17"
	c.Listen, c.Drain = ListenOff, true
	c.Retry = Retry{Initial: 10 * time.Millisecond, Max: 40 * time.Millisecond}
	c.PollInterval, c.Grace = 20*time.Millisecond, 2*time.Second
	return c
}

// checkShipped checks that every file of fx is at its key with its bytes and metadata, and
// that nothing else is under wharf/.
func (fx *fixture) checkShipped(t *testing.T, st *store.Store, cfg Config) {
	t.Helper()
	ctx := t.Context()
	var want []string
	for _, f := range fx.files {
		key := fx.key(t, cfg, f)
		want = append(want, key)
		obj, err := st.Get(ctx, key, nil)
		if err != nil {
			t.Errorf("file %d: %v", f.ID, err)
			continue
		}
		got, err := io.ReadAll(obj)
		obj.Close()
		if err != nil || !bytes.Equal(got, fx.data[f.ID]) {
			t.Errorf("file %d at %s: %d bytes (%v), want its %d bytes", f.ID, key, len(got), err, len(fx.data[f.ID]))
		}
		md := obj.Info.Metadata
		wantMD := Metadata(cfg.Node, f)
		for k, v := range wantMD {
			if md[k] != v {
				t.Errorf("file %d: metadata %s = %q, want %q", f.ID, k, md[k], v)
			}
		}
	}
	objs, err := st.ListAll(ctx, "wharf/")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range objs {
		keys = append(keys, o.Key)
	}
	slices.Sort(keys)
	slices.Sort(want)
	if !slices.Equal(keys, want) {
		t.Errorf("objects under wharf/:\n%s\nwant exactly:\n%s", strings.Join(keys, "\n"), strings.Join(want, "\n"))
	}
}

// openSpool opens the spool after the service released it.
func (fx *fixture) openSpool(t *testing.T) *spool.Spool {
	t.Helper()
	sp, err := spool.Open(fx.dir, spool.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sp.Close() })
	return sp
}

// readyFiles counts the files in ready/.
func (fx *fixture) readyFiles(t *testing.T) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(filepath.Join(fx.dir, spool.ReadyDir), func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// options is Options for a test: its logger, and st as the destination whatever the URL.
// (Run closes the store it opened; closing a mem, file or S3 store releases nothing, so the
// test goes on using st.)
func options(t *testing.T, st *store.Store) Options {
	return Options{Logger: testLogger(t), OpenStore: func(context.Context, string, *store.Config) (*store.Store, error) {
		return st, nil
	}}
}

// start runs a Shipper in the background; wait returns Run's error.
func start(t *testing.T, ctx context.Context, cfg Config, opts Options) (s *Shipper, wait func() error) {
	t.Helper()
	s, err := New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan error, 1)
	go func() { ch <- s.Run(ctx) }()
	return s, func() error {
		select {
		case err := <-ch:
			return err
		case <-time.After(30 * time.Second):
			t.Fatal("Run did not return within 30 s")
			return nil
		}
	}
}

// runToEnd runs a drain-mode Shipper to its end.
func runToEnd(t *testing.T, cfg Config, opts Options) (*Shipper, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	s, wait := start(t, ctx, cfg, opts)
	return s, wait()
}

// eventually polls cond until it holds or 10 s pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

func contextWithTimeout(t *testing.T, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(t.Context(), d)
}

func newMem() *store.Store { return store.New(mem.New(), nil) }

// noConditions is a store that ignores every condition, as a store without conditional
// writes does.
type noConditions struct{ driver.Bucket }

func (n noConditions) Unwrap() driver.Bucket { return n.Bucket }

func (n noConditions) Put(ctx context.Context, key string, body io.Reader, opts *store.PutOptions) (store.ObjectInfo, error) {
	o := *opts
	o.IfNoneMatch, o.IfMatch = false, ""
	return n.Bucket.Put(ctx, key, body, &o)
}

func (n noConditions) Get(ctx context.Context, key string, opts *store.GetOptions) (*store.Object, error) {
	if opts != nil {
		o := *opts
		o.IfMatch = ""
		opts = &o
	}
	return n.Bucket.Get(ctx, key, opts)
}

func (n noConditions) Delete(ctx context.Context, key string, _ *store.DeleteOptions) error {
	return n.Bucket.Delete(ctx, key, &driver.DeleteOptions{})
}

// flaky fails calls as unavailable while down (every call) or failPuts (puts under wharf/).
type flaky struct {
	driver.Bucket
	down, failPuts atomic.Bool
	failed         atomic.Int64
}

func (f *flaky) Unwrap() driver.Bucket { return f.Bucket }

func (f *flaky) fail(op, key string) error {
	f.failed.Add(1)
	return &store.Error{Op: op, Key: key, Kind: store.ErrUnavailable, Err: errors.New("injected: the store is unreachable"), Attempts: 3}
}

func (f *flaky) Put(ctx context.Context, key string, body io.Reader, opts *store.PutOptions) (store.ObjectInfo, error) {
	if f.down.Load() || (f.failPuts.Load() && strings.HasPrefix(key, KeyRoot)) {
		return store.ObjectInfo{}, f.fail("put", key)
	}
	return f.Bucket.Put(ctx, key, body, opts)
}

func (f *flaky) Head(ctx context.Context, key string) (store.ObjectInfo, error) {
	if f.down.Load() {
		return store.ObjectInfo{}, f.fail("head", key)
	}
	return f.Bucket.Head(ctx, key)
}

func (f *flaky) Get(ctx context.Context, key string, opts *store.GetOptions) (*store.Object, error) {
	if f.down.Load() {
		return nil, f.fail("get", key)
	}
	return f.Bucket.Get(ctx, key, opts)
}

func (f *flaky) List(ctx context.Context, opts *store.ListOptions) (store.Page, error) {
	if f.down.Load() {
		return store.Page{}, f.fail("list", opts.Prefix)
	}
	return f.Bucket.List(ctx, opts)
}

// gated holds every put under wharf/ until its gate opens (or the put's context ends).
type gated struct {
	driver.Bucket
	gate    chan struct{}
	entered chan string
	once    sync.Once
}

func newGated(inner driver.Bucket) *gated {
	return &gated{Bucket: inner, gate: make(chan struct{}), entered: make(chan string, 100)}
}

func (g *gated) Unwrap() driver.Bucket { return g.Bucket }
func (g *gated) open()                 { g.once.Do(func() { close(g.gate) }) }

func (g *gated) Put(ctx context.Context, key string, body io.Reader, opts *store.PutOptions) (store.ObjectInfo, error) {
	if strings.HasPrefix(key, KeyRoot) {
		g.entered <- key
		select {
		case <-g.gate:
		case <-ctx.Done():
			return store.ObjectInfo{}, ctx.Err()
		}
	}
	return g.Bucket.Put(ctx, key, body, opts)
}

// putObject writes content at key, as another writer would.
func putObject(t *testing.T, st *store.Store, key string, content []byte, md map[string]string) {
	t.Helper()
	if _, err := st.Put(t.Context(), key, bytes.NewReader(content), &store.PutOptions{Size: int64(len(content)), Metadata: md}); err != nil {
		t.Fatal(err)
	}
}

// serveOn runs the Shipper's handler on a loopback test listener and returns its base URL.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// listening returns an Options.Listening that sends the bound address on the channel.
func listening() (func(net.Addr), chan string) {
	ch := make(chan string, 1)
	return func(a net.Addr) { ch <- "http://" + a.String() }, ch
}
