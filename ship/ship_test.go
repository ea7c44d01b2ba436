package ship

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wharfdata/wharf/spool"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
	"github.com/wharfdata/wharf/store/mem"
	"github.com/wharfdata/wharf/store/probe"
	"github.com/wharfdata/wharf/store/storetest"
)

// TestShip ships small and large files to a store that enforces conditions: every file once,
// at its key, with its bytes and metadata; the catalog records each upload and retention
// removes the local files only then.
func TestShip(t *testing.T) {
	fx := newFixture(t, 100, 0, 3000, 5000, 10)
	st := newMem()
	cfg := fx.config("mem://x")
	cfg.MultipartThreshold = 2000 // 3000 and 5000 go the large way: HEAD first, parts
	s, err := runToEnd(t, cfg, options(t, st))
	if err != nil {
		t.Fatal(err)
	}
	fx.checkShipped(t, st, cfg)
	stat := s.Status()
	if stat.PutMode != PutCreate || stat.Uploaded != 5 || stat.State != StateStopped || stat.Backlog.Files != 0 {
		t.Errorf("status %+v; want put mode create, 5 uploaded, stopped, no backlog", stat)
	}
	if n := fx.readyFiles(t); n != 0 {
		t.Errorf("%d files left in ready/ with delete_after_upload", n)
	}
	sp := fx.openSpool(t)
	if st := sp.Stats(); st.Deleted.Files != 5 || st.Eligible.Files != 0 || st.Uploaded.Files != 0 {
		t.Errorf("spool stats %+v; want 5 deleted", st)
	}
}

// TestShipKeepAndRecord keeps the files (retention keep) and checks the catalog's records.
func TestShipKeepAndRecord(t *testing.T) {
	fx := newFixture(t, 10, 20, 30)
	st := newMem()
	cfg := fx.config("mem://x")
	cfg.Retention = Retention{Mode: Keep}
	// The second file is already there with the same content: the path after a crash
	// between an upload and its record.
	equal := fx.files[1]
	putObject(t, st, fx.key(t, cfg, equal), fx.data[equal.ID], Metadata(cfg.Node, equal))
	if _, err := runToEnd(t, cfg, options(t, st)); err != nil {
		t.Fatal(err)
	}
	fx.checkShipped(t, st, cfg)
	if n := fx.readyFiles(t); n != 3 {
		t.Errorf("%d files in ready/ with keep, want 3", n)
	}
	ret := fx.openSpool(t).Retained()
	if len(ret) != 3 {
		t.Fatalf("retained %d, want 3", len(ret))
	}
	for _, f := range ret {
		want := OutcomeOK
		if f.ID == equal.ID {
			want = OutcomeConflictEqual
		}
		if f.Outcome != want || !strings.HasSuffix(f.Key, fx.key(t, cfg, f)) || f.ETag == "" {
			t.Errorf("file %d recorded outcome %q key %q etag %q; want %s at its key", f.ID, f.Outcome, f.Key, f.ETag, want)
		}
	}
}

// TestShipCollision: other content at a file's key stops shipping with the fatal error naming
// the file and the key; the object is left as it was and the file is kept.
func TestShipCollision(t *testing.T) {
	for _, mode := range []struct {
		name string
		st   func() *store.Store
		size int
	}{
		{"create", newMem, 50},
		{"create-large", newMem, 3000},
		{"overwrite", func() *store.Store { return store.New(noConditions{mem.New()}, nil) }, 50},
	} {
		t.Run(mode.name, func(t *testing.T) {
			fx := newFixture(t, 10, mode.size)
			st := mode.st()
			cfg := fx.config("mem://x")
			cfg.MultipartThreshold = 2000
			victim := fx.files[1]
			key := fx.key(t, cfg, victim)
			other := bytes.Repeat([]byte("x"), mode.size)
			putObject(t, st, key, other, map[string]string{"wharf-sha256": "0000", "wharf-node": "gw-17"})
			s, err := runToEnd(t, cfg, options(t, st))
			if !errors.Is(err, ErrObjectKeyCollision) {
				t.Fatalf("Run = %v, want WHARF_OBJECT_KEY_COLLISION", err)
			}
			for _, want := range []string{key, victim.Path, "epoch", "node id", "nothing was overwritten"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the error does not say %q: %v", want, err)
				}
			}
			obj, err := st.Get(t.Context(), key, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(obj)
			obj.Close()
			if !bytes.Equal(got, other) {
				t.Error("the object at the colliding key was overwritten")
			}
			if _, err := os.Stat(victim.Path); err != nil {
				t.Errorf("the colliding file was removed locally: %v", err)
			}
			stat := s.Status()
			if stat.Fatal == nil || stat.Fatal.Code != "WHARF_OBJECT_KEY_COLLISION" || stat.Fatal.FileID != victim.ID || stat.State != StateFatal {
				t.Errorf("status %+v, want fatal naming file %d", stat, victim.ID)
			}
			if p := fx.openSpool(t).Pending(); len(p) != 1 || p[0].ID != victim.ID {
				t.Errorf("pending %v, want only the colliding file", p)
			}
		})
	}
}

// TestShipNoConditions: on a store that ignores conditions, auto ships with plain puts
// verified after, and create refuses to start.
func TestShipNoConditions(t *testing.T) {
	fx := newFixture(t, 10, 3000)
	st := store.New(noConditions{mem.New()}, nil)
	cfg := fx.config("mem://x")
	cfg.MultipartThreshold = 2000
	cfg.ConditionalPut = PutCreate
	s, err := runToEnd(t, cfg, options(t, st))
	if !errors.Is(err, probe.ErrCoordinationUnproven) || !strings.Contains(err.Error(), "conditional_put is create") {
		t.Fatalf("create on a store without conditions: %v, want WHARF_COORDINATION_UNPROVEN", err)
	}
	if s.Status().Probe.Capabilities[probe.CapConditionalCreate].Verdict != probe.No {
		t.Errorf("probe %+v", s.Status().Probe)
	}
	if fx.readyFiles(t) != 2 {
		t.Error("files were removed by a service that refused to start")
	}
	cfg.ConditionalPut = PutAuto
	s, err = runToEnd(t, cfg, options(t, st))
	if err != nil {
		t.Fatal(err)
	}
	if s.Status().PutMode != PutOverwrite {
		t.Errorf("put mode %q, want overwrite", s.Status().PutMode)
	}
	fx.checkShipped(t, st, cfg)
}

// racer replaces an object right after the service's put, as a second writer would.
type racer struct {
	driver.Bucket
	key string
}

func (r racer) Unwrap() driver.Bucket { return r.Bucket }

func (r racer) Put(ctx context.Context, key string, body io.Reader, opts *store.PutOptions) (store.ObjectInfo, error) {
	info, err := r.Bucket.Put(ctx, key, body, opts)
	if err == nil && key == r.key {
		_, err = r.Bucket.Put(ctx, key, strings.NewReader("someone else"), &store.PutOptions{Size: 12})
	}
	return info, err
}

// TestShipOverwriteVerifies: in overwrite mode a put that another writer replaced at once is
// caught by the verification after it.
func TestShipOverwriteVerifies(t *testing.T) {
	fx := newFixture(t, 12)
	cfg := fx.config("mem://x")
	cfg.ConditionalPut = PutOverwrite
	st := store.New(racer{Bucket: mem.New(), key: fx.key(t, cfg, fx.files[0])}, nil)
	_, err := runToEnd(t, cfg, options(t, st))
	if !errors.Is(err, ErrObjectKeyCollision) {
		t.Fatalf("Run = %v, want a collision found by the verification", err)
	}
	if fx.readyFiles(t) != 1 {
		t.Error("the file was removed")
	}
}

// TestShipRetriesThenResumes: with the store refusing uploads, files wait (nothing deleted),
// the retry age grows, and shipping resumes by itself once the store is back.
func TestShipRetriesThenResumes(t *testing.T) {
	fx := newFixture(t, 10, 20, 30)
	fl := &flaky{Bucket: mem.New()}
	fl.failPuts.Store(true)
	cfg := fx.config("mem://x")
	s, wait := start(t, t.Context(), cfg, options(t, store.New(fl, nil)))
	eventually(t, "retries", func() bool { st := s.Status(); return st.Retrying == 3 && st.RetryAge > 0.1 })
	st := s.Status()
	if st.State != StateRetrying || st.LastError == nil || st.LastError.Code != "WHARF_UNAVAILABLE" || st.Backlog.Files != 3 {
		t.Errorf("status while the store is down: %+v", st)
	}
	if n := fx.readyFiles(t); n != 3 {
		t.Errorf("%d files in ready/ while nothing could be uploaded, want 3", n)
	}
	fl.failPuts.Store(false)
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	fx.checkShipped(t, store.New(fl.Bucket, nil), cfg)
	if st := s.Status(); st.Retrying != 0 || st.RetryAge != 0 || st.Uploaded != 3 {
		t.Errorf("status after the store came back: %+v", st)
	}
}

// TestShipProbeWaits: a store unreachable at start is probed again until it answers; it is
// never taken for one without conditional writes.
func TestShipProbeWaits(t *testing.T) {
	fx := newFixture(t, 10)
	fl := &flaky{Bucket: mem.New()}
	fl.down.Store(true)
	cfg := fx.config("mem://x")
	s, wait := start(t, t.Context(), cfg, options(t, store.New(fl, nil)))
	eventually(t, "probe failures", func() bool { return fl.failed.Load() >= 3 })
	if st := s.Status(); st.State != StateProbing || st.RetryAge <= 0 || st.PutMode != "" {
		t.Errorf("status while the store is down at start: %+v", st)
	}
	fl.down.Store(false)
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	if s.Status().PutMode != PutCreate {
		t.Errorf("put mode %q after the store came back, want create", s.Status().PutMode)
	}
	fx.checkShipped(t, store.New(fl.Bucket, nil), cfg)
}

// TestShipKeepFor removes files only once keep_for has passed since their upload.
func TestShipKeepFor(t *testing.T) {
	fx := newFixture(t, 10, 20)
	st := newMem()
	cfg := fx.config("mem://x")
	cfg.Retention = Retention{Mode: KeepFor, KeepFor: time.Hour}
	var offset atomic.Int64
	opts := options(t, st)
	opts.Now = func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	if _, err := runToEnd(t, cfg, opts); err != nil {
		t.Fatal(err)
	}
	if n := fx.readyFiles(t); n != 2 {
		t.Fatalf("%d files in ready/ right after upload with keep_for 1h, want 2", n)
	}
	offset.Store(int64(59 * time.Minute))
	if _, err := runToEnd(t, cfg, opts); err != nil {
		t.Fatal(err)
	}
	if n := fx.readyFiles(t); n != 2 {
		t.Fatalf("%d files in ready/ 59 minutes after upload, want 2", n)
	}
	offset.Store(int64(61 * time.Minute))
	if _, err := runToEnd(t, cfg, opts); err != nil {
		t.Fatal(err)
	}
	if n := fx.readyFiles(t); n != 0 {
		t.Errorf("%d files in ready/ 61 minutes after upload, want 0", n)
	}
}

// TestShipStop: a stop lets the upload in flight finish within the grace period and records
// it; past the grace it is cancelled and the file stays waiting. Run returns nil either way.
func TestShipStop(t *testing.T) {
	t.Run("finishes within the grace", func(t *testing.T) {
		fx := newFixture(t, 10, 20)
		g := newGated(mem.New())
		cfg := fx.config("mem://x")
		cfg.Drain, cfg.UploadConcurrency = false, 1
		ctx, cancel := context.WithCancel(t.Context())
		s, wait := start(t, ctx, cfg, options(t, store.New(g, nil)))
		<-g.entered
		cancel()
		eventually(t, "stopping", func() bool { return s.Status().State == StateStopping })
		time.Sleep(30 * time.Millisecond)
		g.open()
		if err := wait(); err != nil {
			t.Fatalf("Run after a stop = %v, want nil", err)
		}
		sp := fx.openSpool(t)
		if p := sp.Pending(); len(p) != 1 || p[0].ID != fx.files[1].ID {
			t.Errorf("pending after the stop: %v; want only the second file (the first finished in flight)", p)
		}
	})
	t.Run("cancelled past the grace", func(t *testing.T) {
		fx := newFixture(t, 10)
		g := newGated(mem.New())
		cfg := fx.config("mem://x")
		cfg.Drain, cfg.Grace = false, 30*time.Millisecond
		ctx, cancel := context.WithCancel(t.Context())
		_, wait := start(t, ctx, cfg, options(t, store.New(g, nil)))
		key := <-g.entered
		cancel()
		if err := wait(); err != nil {
			t.Fatalf("Run after a stop = %v, want nil", err)
		}
		if _, err := g.Head(t.Context(), key); !errors.Is(err, store.ErrNotExist) {
			t.Errorf("the cancelled upload left an object: %v", err)
		}
		if fx.readyFiles(t) != 1 || len(fx.openSpool(t).Pending()) != 1 {
			t.Error("the cancelled file is not waiting in the spool")
		}
	})
}

// TestShipOutcomeUnknown: a conditional put whose answer is lost is settled by one HEAD: the
// object carries our put id, so the upload counts as ok.
func TestShipOutcomeUnknown(t *testing.T) {
	fx := newFixture(t, 10, 20)
	cfg := fx.config("mem://x")
	key := fx.key(t, cfg, fx.files[0])
	faulty := storetest.Faulty(mem.New(), storetest.Rule{Op: "put", Key: key, Times: 1, Fault: driver.FaultTransport, AfterApply: true})
	p := store.DefaultRetryPolicy()
	p.Sleep = func(context.Context, time.Duration) error { return nil }
	st := store.New(faulty, p)
	if _, err := runToEnd(t, cfg, options(t, st)); err != nil {
		t.Fatal(err)
	}
	if faulty.Faults("put") != 1 {
		t.Fatalf("%d faults injected, want 1", faulty.Faults("put"))
	}
	fx.checkShipped(t, st, cfg)
}

// TestShipRepairsMetadata: an object with the file's bytes but no metadata (a file store
// killed between writing an object and its metadata) is verified by its content and gets
// its metadata.
func TestShipRepairsMetadata(t *testing.T) {
	fx := newFixture(t, 10)
	st := newMem()
	cfg := fx.config("mem://x")
	f := fx.files[0]
	putObject(t, st, fx.key(t, cfg, f), fx.data[f.ID], nil)
	if _, err := runToEnd(t, cfg, options(t, st)); err != nil {
		t.Fatal(err)
	}
	fx.checkShipped(t, st, cfg)
}

// TestShipChangedFile: a spooled file whose bytes changed is fatal, and the object written
// from it is removed.
func TestShipChangedFile(t *testing.T) {
	fx := newFixture(t, 10)
	st := newMem()
	cfg := fx.config("mem://x")
	f := fx.files[0]
	if err := os.WriteFile(f.Path, bytes.Repeat([]byte("z"), 10), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := runToEnd(t, cfg, options(t, st))
	if !errors.Is(err, spool.ErrCorrupt) || !strings.Contains(err.Error(), f.Path) || !strings.Contains(err.Error(), "changed on disk") {
		t.Fatalf("Run = %v, want WHARF_SPOOL_CORRUPT naming %s", err, f.Path)
	}
	if _, err := st.Head(t.Context(), fx.key(t, cfg, f)); !errors.Is(err, store.ErrNotExist) {
		t.Errorf("the object written from the changed file is still there: %v", err)
	}
}

// TestShipHTTP serves /metrics, /status and /healthz while the service runs.
func TestShipHTTP(t *testing.T) {
	fx := newFixture(t, 10, 20, 30)
	st := newMem()
	cfg := fx.config("mem://x")
	cfg.Drain, cfg.Listen = false, "127.0.0.1:0"
	opts := options(t, st)
	var addr chan string
	opts.Listening, addr = listening()
	ctx, cancel := context.WithCancel(t.Context())
	s, wait := start(t, ctx, cfg, opts)
	base := <-addr
	eventually(t, "three uploads", func() bool { return s.Status().Uploaded == 3 })
	code, body := get(t, base+"/metrics")
	for _, want := range []string{`wharf_ship_uploads_total{outcome="ok"} 3`, `wharf_ship_uploads_total{outcome="fatal"} 0`,
		"wharf_ship_bytes_total 60", "wharf_ship_upload_seconds_count 3", "wharf_ship_retry_age_seconds 0",
		`wharf_spool_files{state="eligible"}`, `wharf_spool_bytes{state="deleted"}`, "process_resident_memory_bytes"} {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("/metrics (%d) lacks %q", code, want)
		}
	}
	eventually(t, "the deleted gauge", func() bool {
		_, body := get(t, base+"/metrics")
		return strings.Contains(body, `wharf_spool_files{state="deleted"} 3`)
	})
	code, body = get(t, base+"/status")
	var stat Status
	if err := json.Unmarshal([]byte(body), &stat); err != nil || code != 200 {
		t.Fatalf("/status %d %q: %v", code, body, err)
	}
	if stat.Component != "ship" || stat.State != StateShipping || stat.PutMode != PutCreate || stat.Uploaded != 3 ||
		stat.Probe == nil || stat.Epoch != fmt.Sprintf("%016x", fx.epoch(t)) || stat.Node != "gw-17" {
		t.Errorf("/status %+v", stat)
	}
	if code, body := get(t, base+"/healthz"); code != 200 || !strings.HasPrefix(body, "ok") {
		t.Errorf("/healthz %d %q", code, body)
	}
	cancel()
	if err := wait(); err != nil {
		t.Fatal(err)
	}
}

// TestShipHealthzFatal: after a fatal error the service stays up (without --drain) with
// /healthz at 503 naming the error, until it is stopped.
func TestShipHealthzFatal(t *testing.T) {
	fx := newFixture(t, 10)
	st := newMem()
	cfg := fx.config("mem://x")
	cfg.Drain, cfg.Listen = false, "127.0.0.1:0"
	putObject(t, st, fx.key(t, cfg, fx.files[0]), []byte("0123456789"), nil)
	opts := options(t, st)
	var addr chan string
	opts.Listening, addr = listening()
	ctx, cancel := context.WithCancel(t.Context())
	s, wait := start(t, ctx, cfg, opts)
	base := <-addr
	eventually(t, "the fatal state", func() bool { return s.Status().State == StateFatal })
	code, body := get(t, base+"/healthz")
	if code != 503 || !strings.Contains(body, "WHARF_OBJECT_KEY_COLLISION") {
		t.Errorf("/healthz when fatal: %d %q", code, body)
	}
	if _, body := get(t, base+"/metrics"); !strings.Contains(body, `wharf_ship_uploads_total{outcome="fatal"} 1`) {
		t.Error("/metrics does not count the fatal outcome")
	}
	cancel()
	if err := wait(); !errors.Is(err, ErrObjectKeyCollision) {
		t.Errorf("Run = %v, want the collision", err)
	}
}

// TestShipRefusesSpool: a directory that is not a spool, or a spool another process owns,
// is refused before anything is shipped.
func TestShipRefusesSpool(t *testing.T) {
	fx := newFixture(t, 10)
	cfg := fx.config("mem://x")
	cfg.Spool = t.TempDir()
	if _, err := runToEnd(t, cfg, options(t, newMem())); !errors.Is(err, spool.ErrNotSpool) {
		t.Errorf("a plain directory: %v, want WHARF_SPOOL_INVALID", err)
	}
	sp := fx.openSpool(t)
	defer sp.Close()
	cfg.Spool = fx.dir
	if _, err := runToEnd(t, cfg, options(t, newMem())); !errors.Is(err, spool.ErrLocked) {
		t.Errorf("an owned spool: %v, want WHARF_SPOOL_LOCKED", err)
	}
}

// slow delays every put under wharf/.
type slow struct {
	driver.Bucket
	d     time.Duration
	puts  atomic.Int64
	keys  sync.Map
	twice atomic.Int64
}

func (s *slow) Unwrap() driver.Bucket { return s.Bucket }

func (s *slow) Put(ctx context.Context, key string, body io.Reader, opts *store.PutOptions) (store.ObjectInfo, error) {
	if strings.HasPrefix(key, KeyRoot) {
		s.puts.Add(1)
		if _, seen := s.keys.LoadOrStore(key, true); seen {
			s.twice.Add(1)
		}
		time.Sleep(s.d)
	}
	return s.Bucket.Put(ctx, key, body, opts)
}

// TestShipManyFiles ships many files with snapshots of the catalog taken while uploads are in
// flight: each file is sent once.
func TestShipManyFiles(t *testing.T) {
	sizes := make([]int, 40)
	for i := range sizes {
		sizes[i] = 10 + i
	}
	fx := newFixture(t, sizes...)
	sl := &slow{Bucket: mem.New(), d: 2 * time.Millisecond}
	cfg := fx.config("mem://x")
	cfg.PollInterval, cfg.UploadConcurrency = 5*time.Millisecond, 3
	if _, err := runToEnd(t, cfg, options(t, store.New(sl, nil))); err != nil {
		t.Fatal(err)
	}
	fx.checkShipped(t, store.New(sl.Bucket, nil), cfg)
	if sl.twice.Load() != 0 || sl.puts.Load() != 40 {
		t.Errorf("%d puts, %d of them a second put of a key; want 40 and 0", sl.puts.Load(), sl.twice.Load())
	}
}

// TestShipClockSkew: a local clock far from the store's is a warning naming the local clock,
// in the log and in /status.
func TestShipClockSkew(t *testing.T) {
	fx := newFixture(t, 10)
	var logs bytes.Buffer
	opts := options(t, newMem())
	opts.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	opts.Now = func() time.Time { return time.Now().Add(-10 * time.Minute) }
	s, err := runToEnd(t, fx.config("mem://x"), opts)
	if err != nil {
		t.Fatal(err)
	}
	p := s.Status().Probe
	if p == nil || p.ClockSkewSeconds < 590 || !strings.Contains(p.ClockSkewWarning, "local clock") {
		t.Fatalf("probe %+v; want a skew of about +600 s and a warning", p)
	}
	if !strings.Contains(logs.String(), "level=WARN msg=\"clock skew\"") || !strings.Contains(logs.String(), "sync the local clock") {
		t.Errorf("no clock skew warning in the log:\n%s", logs.String())
	}
}
