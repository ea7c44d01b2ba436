package ship

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wharfdata/wharf/internal/faultproxy"
	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/spool"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/probe"
	_ "github.com/wharfdata/wharf/store/s3" // the s3:// backend
)

var bucketSeq atomic.Int64

// minioDest makes a fresh bucket on srv and returns the destination URL (with a prefix), the
// store config to reach it, and the store opened on that URL. The bucket is emptied when the
// test ends.
func minioDest(t testing.TB, srv testenv.S3Server) (string, store.Config, *store.Store) {
	t.Helper()
	cfg := *srv.StoreConfig(t)
	bucket := fmt.Sprintf("wharf-ship-%d-%d", os.Getpid(), bucketSeq.Add(1))
	url := "s3://" + bucket + "/landing"
	st, err := store.Open(t.Context(), url, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.MakeBucket(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// t.Context() is already cancelled when cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		objs, err := st.ListAll(ctx, "")
		if err == nil {
			keys := make([]string, len(objs))
			for i, o := range objs {
				keys[i] = o.Key
			}
			err = st.DeleteMany(ctx, keys)
		}
		if err != nil {
			t.Logf("cleanup: %v", err)
		}
		st.Close()
	})
	return url, cfg, st
}

// minioConfig is fx's config for the destination, with multipart above 5 MiB in 5 MiB parts.
func minioConfig(fx *fixture, url string, sc store.Config) Config {
	cfg := fx.config(url)
	cfg.Store = sc
	cfg.MultipartThreshold, cfg.PartSize = 5<<20, 5<<20
	return cfg
}

const mib = 1 << 20

// TestMinIOShip ships small and multipart files to MinIO (conditional create enforced): every
// object once, with its bytes and metadata; a file already there with the same content is
// conflict_equal.
func TestMinIOShip(t *testing.T) {
	url, sc, st := minioDest(t, testenv.MinIO(t))
	fx := newFixture(t, 1000, 17*mib, 10, 6*mib, 17*mib+3, 0)
	cfg := minioConfig(fx, url, sc)
	equal := fx.files[2]
	putObject(t, st, fx.key(t, cfg, equal), fx.data[equal.ID], Metadata(cfg.Node, equal))
	s, err := runToEnd(t, cfg, Options{Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if s.Status().PutMode != PutCreate {
		t.Errorf("put mode on MinIO %q, want create", s.Status().PutMode)
	}
	fx.checkShipped(t, st, cfg)
	multipart := regexp.MustCompile(`-(\d+)$`)
	for _, f := range []int{1, 4} {
		info, err := st.Head(t.Context(), fx.key(t, cfg, fx.files[f]))
		if err != nil {
			t.Fatal(err)
		}
		m := multipart.FindStringSubmatch(info.ETag)
		if m == nil || m[1] != "4" {
			t.Errorf("file %d (17 MiB) has ETag %q: want a multipart upload of 4 parts of 5 MiB", f, info.ETag)
		}
	}
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, want := range []string{`wharf_ship_uploads_total{outcome="ok"} 5`, `wharf_ship_uploads_total{outcome="conflict_equal"} 1`} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	sp := fx.openSpool(t)
	if st := sp.Stats(); st.Deleted.Files != 6 {
		t.Errorf("spool stats %+v, want 6 deleted", st)
	}
}

// TestMinIOCollision: a different object at a file's key stops the service with the fatal
// error naming the file and the key, whether the file goes in one put or multipart.
func TestMinIOCollision(t *testing.T) {
	for _, size := range []int{100, 6 * mib} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			url, sc, st := minioDest(t, testenv.MinIO(t))
			fx := newFixture(t, size)
			cfg := minioConfig(fx, url, sc)
			f := fx.files[0]
			key := fx.key(t, cfg, f)
			putObject(t, st, key, bytes.Repeat([]byte{1}, size), nil)
			_, err := runToEnd(t, cfg, Options{Logger: testLogger(t)})
			if !errors.Is(err, ErrObjectKeyCollision) || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), f.Path) {
				t.Fatalf("Run = %v; want WHARF_OBJECT_KEY_COLLISION naming %s and %s", err, f.Path, key)
			}
			if fx.readyFiles(t) != 1 {
				t.Error("the colliding file was removed")
			}
		})
	}
}

// TestMinIONoConditions puts MinIO behind a proxy that strips conditional headers: the probe
// finds no conditional create, auto ships with plain puts verified by HEAD, and create
// refuses to start.
func TestMinIONoConditions(t *testing.T) {
	proxy, srv := testenv.FaultProxy(t, testenv.MinIO(t))
	proxy.StripConditions(true)
	url, sc, st := minioDest(t, srv)
	fx := newFixture(t, 10, 7*mib, 17*mib)
	cfg := minioConfig(fx, url, sc)
	cfg.ConditionalPut = PutCreate
	s, err := runToEnd(t, cfg, Options{Logger: testLogger(t)})
	if !errors.Is(err, probe.ErrCoordinationUnproven) {
		t.Fatalf("create behind the stripping proxy: %v, want WHARF_COORDINATION_UNPROVEN", err)
	}
	if v := s.Status().Probe.Capabilities[probe.CapConditionalCreate].Verdict; v != probe.No {
		t.Errorf("the probe says conditional create %q, want no", v)
	}
	cfg.ConditionalPut = PutAuto
	s, err = runToEnd(t, cfg, Options{Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if s.Status().PutMode != PutOverwrite {
		t.Errorf("put mode %q, want overwrite", s.Status().PutMode)
	}
	fx.checkShipped(t, st, cfg)
	// Verified: every upload was followed by a HEAD of its key.
	for _, f := range fx.files {
		key := strings.TrimPrefix(url, "s3://") + "/" + fx.key(t, cfg, f)
		if n := proxy.Count("HEAD", key); n < 2 {
			t.Errorf("file %d: %d HEADs of its key, want one before and one after the put", f.ID, n)
		}
	}
}

// TestMinIOUnreachable: while every request for the spool's keys is reset, files wait,
// nothing is deleted and the retry age grows in /metrics; once the store answers again,
// shipping resumes by itself.
func TestMinIOUnreachable(t *testing.T) {
	proxy, srv := testenv.FaultProxy(t, testenv.MinIO(t))
	url, sc, st := minioDest(t, srv)
	fx := newFixture(t, 10, 20, 6*mib)
	cfg := minioConfig(fx, url, sc)
	cfg.Listen = "127.0.0.1:0"
	outage := proxy.Inject(faultproxy.Rule{Path: "/" + KeyRoot + "/", Fault: faultproxy.Reset})
	var logs syncBuffer
	opts := Options{Logger: slog.New(slog.NewTextHandler(io.MultiWriter(&logs, t.Output()), &slog.HandlerOptions{Level: slog.LevelDebug}))}
	var addr chan string
	opts.Listening, addr = listening()
	s, wait := start(t, t.Context(), cfg, opts)
	base := <-addr
	ageRE := regexp.MustCompile(`(?m)^wharf_ship_retry_age_seconds ([0-9.e+]+)$`)
	age := func() float64 {
		_, body := get(t, base+"/metrics")
		m := ageRE.FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("no wharf_ship_retry_age_seconds in /metrics:\n%s", body)
		}
		v, _ := strconv.ParseFloat(m[1], 64)
		return v
	}
	eventually(t, "a retry age over 0.3 s", func() bool { return age() > 0.3 })
	first := age()
	eventually(t, "the retry age to grow", func() bool { return age() > first+0.2 })
	if n := fx.readyFiles(t); n != 3 || s.Status().Uploaded != 0 {
		t.Fatalf("during the outage: %d files in ready/, %d uploaded; want 3 and 0", n, s.Status().Uploaded)
	}
	if _, body := get(t, base+"/metrics"); !regexp.MustCompile(`wharf_ship_uploads_total\{outcome="retry"\} [1-9]`).MatchString(body) {
		t.Error("/metrics counts no retry during the outage")
	}
	_, status := get(t, base+"/status")
	_, metrics := get(t, base+"/metrics")
	outage.Remove()
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	// No credential anywhere the service writes.
	for what, text := range map[string]string{"the log": logs.String(), "/status": status, "/metrics": metrics} {
		for _, secret := range []string{srv.SecretKey, srv.AccessKey} {
			if strings.Contains(text, secret) {
				t.Errorf("%s shows a credential", what)
			}
		}
	}
	if !strings.Contains(logs.String(), "upload failed; will retry") {
		t.Error("the log does not show the failed uploads (the scan above would prove nothing)")
	}
	fx.checkShipped(t, st, cfg)
	if fx.readyFiles(t) != 0 {
		t.Error("files left in ready/ after the store came back")
	}
}

// syncBuffer is a bytes.Buffer safe for the logger's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// changingReaderAt writes into the spooled file once the part at `at` is first read in place:
// a producer that wrote to a file after spooling it, in the middle of its upload.
type changingReaderAt struct {
	io.Reader
	ra   io.ReaderAt
	path string
	at   int64
	once sync.Once
}

func (c *changingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off >= c.at {
		c.once.Do(func() {
			f, err := os.OpenFile(c.path, os.O_WRONLY, 0)
			if err == nil {
				_, _ = f.WriteAt([]byte("changed"), 1) // in part 1, read already or not
				f.Close()
			}
		})
	}
	return c.ra.ReadAt(p, off)
}

// TestMinIOInPlaceUpload: a multipart upload reads the file's parts in place (ReadAt, no part
// buffers), and still proves the bytes sent are the bytes the spool recorded: a file changed
// in the middle of its upload stops the service with WHARF_SPOOL_CORRUPT naming it, and the
// object written from it is removed.
func TestMinIOInPlaceUpload(t *testing.T) {
	url, sc, st := minioDest(t, testenv.MinIO(t))
	fx := newFixture(t, 17*mib) // above the S3 backend's 16 MiB single put
	cfg := minioConfig(fx, url, sc)
	f := fx.files[0]
	var inPlace atomic.Bool
	opts := Options{Logger: testLogger(t), Hooks: Hooks{Body: func(sf spool.File, r io.Reader) io.Reader {
		ra, ok := r.(io.ReaderAt)
		inPlace.Store(ok)
		if !ok {
			return r
		}
		return &changingReaderAt{Reader: r, ra: ra, path: sf.Path, at: 10 * mib}
	}}}
	_, err := runToEnd(t, cfg, opts)
	if !inPlace.Load() {
		t.Fatal("the 17 MiB file was not offered for reading in place")
	}
	if !errors.Is(err, spool.ErrCorrupt) || !strings.Contains(err.Error(), f.Path) || !strings.Contains(err.Error(), "changed on disk") {
		t.Fatalf("Run = %v; want WHARF_SPOOL_CORRUPT naming %s as changed", err, f.Path)
	}
	if _, err := st.Head(t.Context(), fx.key(t, cfg, f)); !errors.Is(err, store.ErrNotExist) {
		t.Errorf("the object written from the changed file is still there: %v", err)
	}
}
