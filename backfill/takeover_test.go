package backfill

import (
	"bytes"
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wharfdata/wharf/cas"
)

// A worker that stops (its context cancelled: no more renewals, no hand-back) leaves its
// split leased; after the lease TTL another worker takes it over and resumes it from the
// last committed watermark: the records committed before are not delivered again, none is
// lost.
func TestAStoppedWorkersSplitResumesElsewhereFromItsWatermark(t *testing.T) {
	src := memStore()
	c := fill(t, src, "logs/", 6, 3000, "plain", "gz", "zst")
	kv := cas.NewMemory()
	cfg := testConfig("mem://src/logs/", "api")
	cfg.SplitMaxObjects, cfg.MaxInFlight, cfg.LeaseTTL = 100, 1, time.Second

	// Worker A takes deliveries, commits the first two, and stops in the middle.
	ctxA, stopA := context.WithCancel(context.Background())
	cons := NewConsumer("api")
	dead := &killable{Store: kv}
	ja, err := New(cfg, Options{Coordinator: NewCAS(dead), Source: src, Prefix: "logs/", Sink: cons})
	if err != nil {
		t.Fatal(err)
	}
	doneA := make(chan error, 1)
	go func() { doneA <- ja.Run(ctxA) }()
	var committed bytes.Buffer
	var last *Delivery
	for i := range 3 {
		d, err := cons.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if d.Offset(0) != Offset(d.Member, d.First) || d.Len() == 0 {
			t.Fatalf("delivery %d: offsets %d, %d records", i, d.Offset(0), d.Len())
		}
		if i < 2 {
			committed.Write(d.Data)
			if err := d.Commit(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		last = d
	}
	dead.kill() // as SIGKILL: A writes nothing more, not even a hand-back
	stopA()
	if err := <-doneA; !errors.Is(err, context.Canceled) {
		t.Fatalf("worker A: %v", err)
	}
	// Its lease is gone: committing now fails, naming the loss, once B has taken over.

	// Worker B resumes.
	var out syncBuffer
	cfgB := cfg
	cfgB.Node = "node-b"
	start := time.Now()
	jb, err := New(cfgB, Options{Coordinator: NewCAS(kv), Source: src, Prefix: "logs/", Sink: &renamed{NewStdout(&out, cfg.CommitInterval), "api"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := jb.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited < cfg.LeaseTTL {
		t.Fatalf("B took over after %s, before the lease TTL %s", waited, cfg.LeaseTTL)
	}
	all := append(committed.Bytes(), out.Bytes()...)
	c.check(t, all, true)
	dead.dead.Store(false) // A's commit reaching the coordinator after all: fenced off
	if err := last.Commit(context.Background()); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("A's late commit: %v, want ErrLeaseLost", err)
	}
}

// killable is a coordinator's store that fails every call once killed: the process is gone.
type killable struct {
	cas.Store
	dead atomic.Bool
}

func (k *killable) kill() { k.dead.Store(true) }

var errKilled = errors.New("killed")

func (k *killable) Get(ctx context.Context, key string) ([]byte, string, error) {
	if k.dead.Load() {
		return nil, "", errKilled
	}
	return k.Store.Get(ctx, key)
}

func (k *killable) Create(ctx context.Context, key string, v []byte) (string, error) {
	if k.dead.Load() {
		return "", errKilled
	}
	return k.Store.Create(ctx, key, v)
}

func (k *killable) Update(ctx context.Context, key string, v []byte, rev string) (string, error) {
	if k.dead.Load() {
		return "", errKilled
	}
	return k.Store.Update(ctx, key, v, rev)
}

// renamed gives a sink another URL (to join a job planned with another sink's name).
type renamed struct {
	Sink
	url string
}

func (r *renamed) URL() string { return r.url }
