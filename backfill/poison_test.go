package backfill

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
	"github.com/wharfdata/wharf/store/mem"
)

// onGet runs fn once, before the first Get of key reaches the bucket: an object changed
// after planning.
type onGet struct {
	driver.Bucket
	mu   sync.Mutex
	hook map[string]func()
}

func (o *onGet) Unwrap() driver.Bucket { return o.Bucket }

func (o *onGet) Get(ctx context.Context, key string, opts *driver.GetOptions) (*driver.Object, error) {
	o.mu.Lock()
	fn := o.hook[key]
	delete(o.hook, key)
	o.mu.Unlock()
	if fn != nil {
		fn()
	}
	return o.Bucket.Get(ctx, key, opts)
}

func TestBadObjectsPoisonTheirSplitNotTheJob(t *testing.T) {
	b := &onGet{Bucket: mem.New(), hook: map[string]func(){}}
	src := store.New(b, nil)
	good := fill(t, src, "logs/", 12, 100, "plain", "gz", "zst")
	lines := []string{record("bad", 0), record("bad", 1), record("bad", 2)}
	gz := encode(t, "gz", lines)
	zst := encode(t, "zst", lines)
	zst[len(zst)/2] ^= 0x40
	bad := map[string]string{
		"logs/bad-deleted.ndjson":     ReasonDeleted,
		"logs/bad-overwritten.ndjson": ReasonOverwritten,
		"logs/bad-truncated.gz":       ReasonCorrupt,
		"logs/bad-flipped.zst":        ReasonCorrupt,
		"logs/bad-long.ndjson":        ReasonCorrupt,
	}
	put(t, src, "logs/bad-deleted.ndjson", []byte(lines[0]+"\n"))
	put(t, src, "logs/bad-overwritten.ndjson", []byte(lines[0]+"\n"))
	put(t, src, "logs/bad-truncated.gz", gz[:len(gz)-9])
	put(t, src, "logs/bad-flipped.zst", zst)
	put(t, src, "logs/bad-long.ndjson", []byte(lines[0]+"\n{\"x\":\""+strings.Repeat("y", 2000)+"\"}\n"))
	ctx := context.Background()
	b.hook["logs/bad-deleted.ndjson"] = func() { _ = src.Delete(ctx, "logs/bad-deleted.ndjson", nil) }
	b.hook["logs/bad-overwritten.ndjson"] = func() { put(t, src, "logs/bad-overwritten.ndjson", []byte(lines[1]+"\n")) }

	cfg := testConfig("mem://src/logs/", "-")
	cfg.SplitMaxObjects, cfg.MaxRecordBytes = 1, 1024
	var out syncBuffer
	j, err := runJob(ctx, t, cfg, NewSolo(), src, NewStdout(&out, cfg.CommitInterval), false)
	if !errors.Is(err, ErrQuarantined) {
		t.Fatalf("Run = %v, want ErrQuarantined", err)
	}
	for key, reason := range bad {
		if !strings.Contains(err.Error(), key+" ("+reason) {
			t.Errorf("the error does not name %s (%s): %v", key, reason, err)
		}
	}
	if !strings.Contains(err.Error(), "5 object(s) quarantined, in 5 of 17 split(s)") {
		t.Errorf("error %q does not count the quarantined objects and their splits", err)
	}
	// Every good object's records arrive exactly once; the bad ones' may arrive in part.
	var goodOut bytes.Buffer
	for l := range bytes.Lines(out.Bytes()) {
		if !bytes.Contains(l, []byte(`"obj":"bad"`)) {
			goodOut.Write(l)
		}
	}
	good.check(t, goodOut.Bytes(), true)
	m := j.m.failed
	for reason, want := range map[string]float64{ReasonDeleted: 2, ReasonOverwritten: 2, ReasonCorrupt: 6, ReasonUnreadable: 0} {
		if got := testutil.ToFloat64(m.WithLabelValues(reason)); got != want {
			t.Errorf("objects_failed_total{reason=%s} = %v, want %v (max_attempts 2)", reason, got, want)
		}
	}
}

func TestFatalStoreErrorsStopTheJobAtOnce(t *testing.T) {
	src := memStore()
	fill(t, src, "logs/", 3, 10, "plain")
	denied := &denyGets{Bucket: src.Bucket()}
	cfg := testConfig("mem://src/logs/", "-")
	_, err := runJob(context.Background(), t, cfg, NewSolo(), store.New(denied, nil), NewStdout(io.Discard, cfg.CommitInterval), false)
	if !errors.Is(err, store.ErrForbidden) || errors.Is(err, ErrQuarantined) {
		t.Fatalf("Run = %v, want the store's ErrForbidden at once", err)
	}
}

type denyGets struct{ driver.Bucket }

func (d *denyGets) Get(_ context.Context, key string, _ *driver.GetOptions) (*driver.Object, error) {
	return nil, &driver.Error{Op: "get", Key: key, Kind: driver.ErrForbidden}
}
