package lease

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/wharfdata/wharf/cas"
)

// oldHolder is a holder of wharf before record format 2, as it left the store: a lease record
// without the log's head, the pointer carrying it, and the pointer's revision, under which its
// next commit advances the pointer.
type oldHolder struct {
	kv     cas.Store
	name   string
	fence  int64
	seq    int64
	ptrRev string
}

func newOldHolder(t *testing.T, kv cas.Store, name string) *oldHolder {
	t.Helper()
	o := &oldHolder{kv: kv, name: name, fence: 3}
	rec := map[string]any{"name": name, "holder": "old-node", "fence": 3, "ttl_ms": 10000, "released": false}
	if _, err := kv.Create(ctx, LeaseKey(name), mustJSON(t, rec)); err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Create(ctx, PointerKey(name), mustJSON(t, Pointer{Name: name, Fence: 3})); err != nil {
		t.Fatal(err)
	}
	_, o.ptrRev, _ = kv.Get(ctx, PointerKey(name))
	if err := o.commit(ctx, "v1"); err != nil {
		t.Fatal(err)
	}
	return o
}

// commit is the old protocol's commit: create the entry, then advance the pointer under the
// revision this holder last saw (an acquisition of that protocol raised the pointer, which
// fenced it).
func (o *oldHolder) commit(ctx context.Context, v string) error {
	e := Entry{Name: o.name, Kind: "k", Seq: o.seq + 1, Fence: o.fence, Node: "old-node", Data: json.RawMessage(`"` + v + `"`)}
	if o.seq > 0 {
		e.Prev = EntryKey(o.name, o.seq, o.fence)
	}
	b, _ := json.Marshal(e)
	key := EntryKey(o.name, e.Seq, e.Fence)
	if _, err := o.kv.Create(ctx, key, b); err != nil {
		return err
	}
	p, _ := json.Marshal(Pointer{Name: o.name, Kind: "k", Fence: o.fence, Seq: e.Seq, Head: key})
	rev, err := o.kv.Update(ctx, PointerKey(o.name), p, o.ptrRev)
	if err != nil {
		return err
	}
	o.ptrRev, o.seq = rev, e.Seq
	return nil
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// committingFirst makes an old holder's commit land just before the acquisition's first
// write to the pointer: between the acquisition's read of the pointer and its raise.
type committingFirst struct {
	cas.Store
	old  *oldHolder
	done bool
}

func (c *committingFirst) Update(ctx context.Context, key string, v []byte, rev string) (string, error) {
	if key == PointerKey(c.old.name) && !c.done {
		c.done = true
		if err := c.old.commit(ctx, "v2"); err != nil {
			return "", err
		}
	}
	return c.Store.Update(ctx, key, v, rev)
}

// A lease of wharf before record format 2 that this wharf takes over while its old holder
// still runs (paused past its TTL in a rolling upgrade): the takeover fences it, as that
// protocol's own acquisitions did, by raising the pointer. Its late commit fails instead of
// landing in a pointer no reader reads any more (after which it would write its manifest and
// _SUCCESS); a commit of it that lands while the takeover runs is kept in the log.
func TestTakeoverOfAnOldFormatLeaseFencesItsOldHolder(t *testing.T) {
	for _, between := range []bool{false, true} {
		kv := cas.Store(cas.NewMemory())
		old := newOldHolder(t, kv, "job")
		want := int64(1)
		if between {
			kv, want = &committingFirst{Store: kv, old: old}, 2
		}
		clk := newClock(epoch)
		c := testConfig("new-node")
		c.Wait = 2 * (c.TTL + c.Skew)
		l, err := OpenCAS(kv, c, &Options{Clock: clk})
		if err != nil {
			t.Fatal(err)
		}
		h, err := l.Acquire(ctx, "job")
		if err != nil {
			t.Fatal(err)
		}
		if h.Fence() != 4 {
			t.Fatalf("fence %d after the old holder's 3", h.Fence())
		}
		if err := old.commit(ctx, "late"); !errors.Is(err, cas.ErrConflict) {
			t.Errorf("between=%v: the old holder's commit after the takeover: %v, want refused", between, err)
		}
		e, err := h.Commit(ctx, "k", "new")
		if err != nil || e.Seq != want+1 {
			t.Fatalf("between=%v: the new holder's commit: %+v, %v (want seq %d)", between, e, err, want+1)
		}
		var seen []string
		for e, err := range l.Log("job").Walk(ctx, "k") {
			if err != nil {
				t.Fatal(err)
			}
			seen = append(seen, string(e.Data))
		}
		if len(seen) != int(want)+1 || seen[0] != `"new"` || seen[len(seen)-1] != `"v1"` {
			t.Errorf("between=%v: the log reads %v", between, seen)
		}
	}
}
