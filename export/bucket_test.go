package export

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path"
	"sync/atomic"
	"testing"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/lease"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
)

func bucketOpts(f *fixture, node string) Options {
	o := f.opts()
	o.StatePath = StateBucket
	c := lease.DefaultConfig()
	c.Node = node
	o.Lease = &c
	return o
}

// rewriteManifest replaces the manifest at the fixture's prefix by edit's, with a matching
// _SUCCESS, as a writer that skipped the log would.
func rewriteManifest(t *testing.T, f *fixture, edit func(*Manifest)) {
	t.Helper()
	ctx := context.Background()
	s := f.store(t)
	obj, err := s.Get(ctx, dataset.ManifestKey, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(obj)
	obj.Close()
	m, err := dataset.DecodeManifest(b)
	if err != nil {
		t.Fatal(err)
	}
	edit(m)
	if b, err = m.Encode(); err != nil {
		t.Fatal(err)
	}
	for key, body := range map[string][]byte{dataset.ManifestKey: b, dataset.SuccessKey: dataset.SuccessBody(b)} {
		if _, err := s.Put(ctx, key, bytes.NewReader(body), &store.PutOptions{Size: int64(len(body))}); err != nil {
			t.Fatal(err)
		}
	}
}

func validateLogged(t *testing.T, f *fixture) *dataset.Validation {
	t.Helper()
	v, err := dataset.Validate(context.Background(), f.store(t), f.prefix(), false, dataset.StoreOpener(nil))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// A run with state: bucket is journaled in the log; its manifest is certified only with the
// log, and only while the log records exactly it.
func TestStateBucketManifestCertifiedOnlyByTheLog(t *testing.T) {
	f := newFixture(t, 100, 30)
	res, err := f.run(t, bucketOpts(f, "a"))
	if err != nil {
		t.Fatal(err)
	}
	if v := validateLogged(t, f); !v.Certified || v.Manifest.Log == nil || v.Manifest.Log.Fence != 1 {
		t.Fatalf("validation %+v", v)
	}
	if v := f.validate(t, false); v.Certified || !hasProblem(v, dataset.ProblemNotLogged) {
		t.Errorf("without the log: certified %v, problems %+v", v.Certified, v.Problems)
	}
	runs, err := LoggedRuns(context.Background(), &f.exp, nil)
	if err != nil || len(runs) != 1 || runs[0].RunID != res.RunID || runs[0].Status != StatusSucceeded {
		t.Fatalf("logged runs %+v, %v", runs, err)
	}
	rewriteManifest(t, f, func(m *Manifest) { m.Rows++ })
	if v := validateLogged(t, f); v.Certified || !hasProblem(v, dataset.ProblemNotLogged) {
		t.Errorf("an edited manifest: certified %v, problems %+v", v.Certified, v.Problems)
	}
	rewriteManifest(t, f, func(m *Manifest) { m.Rows--; m.Log.Seq++ })
	if v := validateLogged(t, f); v.Certified || !hasProblem(v, dataset.ProblemNotLogged) {
		t.Errorf("a manifest naming an entry never committed: certified %v, problems %+v", v.Certified, v.Problems)
	}
}

// The delta cursor lives in the log: a second run, from another node, exports only the rows
// past it.
func TestStateBucketDeltaCursorInTheLog(t *testing.T) {
	f := newFixture(t, 100, 30)
	f.exp.Mode, f.exp.CursorColumn = ModeDelta, "id"
	if res, err := f.run(t, bucketOpts(f, "a")); err != nil || res.Rows != 100 {
		t.Fatalf("first run: %+v, %v", res, err)
	}
	db := openDB(t, f.db)
	insertRows(t, db, 101, 130)
	res, err := f.run(t, bucketOpts(f, "b"))
	if err != nil || res.Rows != 30 {
		t.Fatalf("second run from node b: %d rows (%v), want the 30 past the logged cursor", res.Rows, err)
	}
}

// A lease another node holds skips the run: ErrHeld, and nothing written at the prefix.
func TestStateBucketHeldSkips(t *testing.T) {
	f := newFixture(t, 100, 30)
	root, err := StateRoot(&f.exp)
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(context.Background(), root, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := lease.DefaultConfig()
	c.Node = "other"
	l, err := lease.Open(context.Background(), s, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Acquire(context.Background(), "orders"); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, f.dir)
	_, err = f.run(t, bucketOpts(f, "a"))
	var he *lease.HeldError
	if !errors.As(err, &he) || he.Holder != "other" {
		t.Fatalf("run: %v, want held by other", err)
	}
	if after := snapshot(t, f.dir); len(after) != len(before) {
		t.Errorf("a skipped run wrote %d files", len(after)-len(before))
	}
}

// countingGets counts the Gets of manifest.json and _SUCCESS that reach the bucket.
type countingGets struct {
	driver.Bucket
	n *atomic.Int64
}

func (c countingGets) Unwrap() driver.Bucket { return c.Bucket }

func (c countingGets) Get(ctx context.Context, key string, opts *driver.GetOptions) (*driver.Object, error) {
	if path.Base(key) == dataset.ManifestKey || path.Base(key) == dataset.SuccessKey {
		c.n.Add(1)
	}
	return c.Bucket.Get(ctx, key, opts)
}

// A run whose holder wrote its manifest and released the lease is settled in the lease
// record: the next acquisition does not read its prefix. One whose record does not say so
// (the holder stopped before it released) is read once: its manifest and its _SUCCESS.
func TestStateBucketSettledRunIsNotReadAgain(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, 100, 30)
	if _, err := f.run(t, bucketOpts(f, "a")); err != nil {
		t.Fatal(err)
	}
	var gets atomic.Int64
	open := func(node string) {
		t.Helper()
		e := f.exp
		e.Store.Wrap = func(b driver.Bucket) driver.Bucket { return countingGets{Bucket: b, n: &gets} }
		o := bucketOpts(f, node)
		j, err := openBucketJournal(ctx, &e, &o, &e.Store)
		if err != nil {
			t.Fatal(err)
		}
		if j.settled == "" {
			t.Errorf("node %s: the journal's certified run is not settled", node)
		}
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
	}
	open("b")
	if n := gets.Swap(0); n != 0 {
		t.Errorf("a settled run's prefix was read %d times at the next acquisition, want 0", n)
	}
	// A holder that releases without saying so (as one stopped after its manifest would
	// leave it: the record's state names no settled run).
	e := f.exp
	o := bucketOpts(f, "c")
	j, err := openBucketJournal(ctx, &e, &o, &e.Store)
	if err != nil {
		t.Fatal(err)
	}
	j.settled = ""
	if err := j.h.Save(ctx, leaseState{}); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	open("d")
	if n := gets.Swap(0); n != 2 {
		t.Errorf("an unsettled run's prefix was read %d times, want 2 (its manifest and _SUCCESS)", n)
	}
	open("e")
	if n := gets.Load(); n != 0 {
		t.Errorf("after it was settled again, the prefix was read %d times, want 0", n)
	}
}
