package natskv

import (
	"context"
	"sync"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

// lateKV loses the answer to the first write, whose request is still on its way: it lands
// only when the write is sent again, after the read-back that found it had not (as a write
// proposed to a stream's old leader can be applied by the new one after a failover).
type lateKV struct {
	jetstream.KeyValue
	once  sync.Once
	calls int
	first func()
}

func (l *lateKV) send(ctx context.Context, do func(context.Context) (uint64, error)) (uint64, error) {
	l.calls++
	if l.calls == 1 {
		l.first = func() { _, _ = do(context.Background()) }
		return 0, context.DeadlineExceeded
	}
	l.once.Do(l.first)
	return do(ctx)
}

func (l *lateKV) Create(ctx context.Context, key string, value []byte, opts ...jetstream.KVCreateOpt) (uint64, error) {
	return l.send(ctx, func(ctx context.Context) (uint64, error) { return l.KeyValue.Create(ctx, key, value, opts...) })
}

func (l *lateKV) Update(ctx context.Context, key string, value []byte, rev uint64) (uint64, error) {
	return l.send(ctx, func(ctx context.Context) (uint64, error) { return l.KeyValue.Update(ctx, key, value, rev) })
}

// A write whose answer was lost and which lands only after its read-back, so that sending it
// again fails its condition, has landed: it returns its revision, never cas.ErrConflict (the
// contract: a write that returns ErrConflict has not landed).
func TestNATSLateLandingWriteIsNotAConflict(t *testing.T) {
	k := open(t, "wharf-cas-late")
	ctx := context.Background()
	real := k.kv
	k.kv = &lateKV{KeyValue: real}
	rev, err := k.Create(ctx, "a", []byte("one"))
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if v, got, err := k.Get(ctx, "a"); err != nil || got != rev || string(v) != "one" {
		t.Fatalf("create returned revision %s; the key holds %q at %s (%v)", rev, v, got, err)
	}
	k.kv = &lateKV{KeyValue: real}
	rev2, err := k.Update(ctx, "a", []byte("two"), rev)
	if err != nil || rev2 == "" {
		t.Fatalf("update: %q, %v", rev2, err)
	}
	if v, got, err := k.Get(ctx, "a"); err != nil || got != rev2 || string(v) != "two" {
		t.Fatalf("update returned revision %s; the key holds %q at %s (%v)", rev2, v, got, err)
	}
}
