package backfill

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/wharfdata/wharf/internal/faultproxy"
	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
	_ "github.com/wharfdata/wharf/store/s3" // the s3:// backend of the MinIO tests
)

// minioBucket makes a fresh bucket on MinIO (reached through srv), removed when the test
// ends, and opens its root.
func minioBucket(t *testing.T, srv testenv.S3Server) *store.Store {
	t.Helper()
	var b [5]byte
	_, _ = rand.Read(b[:])
	name := "wharf-bf-" + hex.EncodeToString(b[:])
	s, err := store.Open(context.Background(), "s3://"+name, srv.StoreConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.MakeBucket(context.Background()); err != nil {
		t.Fatal(err)
	}
	srv.RemoveBucketOnCleanup(t, name)
	return s
}

// An object that answers 503 past the store's retry budget poisons its split (reason
// unreadable), which is quarantined after max_attempts; every other object's records are
// delivered exactly once, through the bucket coordinator on MinIO.
func TestAnObjectUnreadablePastTheRetryBudgetIsQuarantined(t *testing.T) {
	srv := testenv.MinIO(t)
	direct := minioBucket(t, srv)
	good := fill(t, direct, "logs/", 20, 200, "plain", "gzmulti", "zstmulti")
	put(t, direct, "logs/bad-503.ndjson", []byte(record("bad", 0)+"\n"))
	proxy, via := testenv.FaultProxy(t, srv)
	inj := proxy.Inject(faultproxy.Rule{Method: "GET", Path: "bad-503", Fault: faultproxy.Status, Status: 503})
	cfgStore := via.StoreConfig(t)
	fast := store.DefaultRetryPolicy()
	fast.ThrottleBase, fast.ThrottleMax = 10*time.Millisecond, 50*time.Millisecond // the budget is the attempts
	cfgStore.Retry = fast
	src, err := store.Open(context.Background(), direct.Describe().Location, cfgStore)
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(direct.Describe().Location+"logs/", "-")
	cfg.SplitMaxObjects = 1
	var out syncBuffer
	j, err := New(cfg, Options{Coordinator: NewBucket(src.Sub(BucketPrefix("poison")), nil), Source: src, Prefix: "logs/",
		Sink: NewStdout(&out, cfg.CommitInterval)})
	if err != nil {
		t.Fatal(err)
	}
	err = j.Run(context.Background())
	if !errors.Is(err, ErrQuarantined) || !strings.Contains(err.Error(), "logs/bad-503.ndjson ("+ReasonUnreadable) {
		t.Fatalf("Run = %v, want ErrQuarantined naming logs/bad-503.ndjson (unreadable)", err)
	}
	good.check(t, out.Bytes(), true)
	if got := testutil.ToFloat64(j.m.failed.WithLabelValues(ReasonUnreadable)); got != float64(cfg.MaxAttempts) {
		t.Fatalf("objects_failed_total{reason=unreadable} = %v, want %d", got, cfg.MaxAttempts)
	}
	if want := cfg.MaxAttempts * fast.ThrottleAttempts; inj.Fired() != want {
		t.Fatalf("the 503 rule fired %d times, want %d (every attempt of every try)", inj.Fired(), want)
	}
}
