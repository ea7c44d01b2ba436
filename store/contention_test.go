package store_test

import (
	"context"
	"io"
	"testing"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/mem"
)

// ignoring is a store that ignores every condition, like a server without conditional writes.
type ignoring struct{ store.Store }

func (s ignoring) Put(ctx context.Context, key string, body io.Reader, o *store.PutOptions) (store.ObjectInfo, error) {
	var c store.PutOptions
	if o != nil {
		c = *o
	}
	c.IfMatch, c.IfNoneMatch = "", false
	return s.Store.Put(ctx, key, body, &c)
}

func (s ignoring) Delete(ctx context.Context, key string, o *store.DeleteOptions) error {
	return s.Store.Delete(ctx, key, nil)
}

func (s ignoring) Get(ctx context.Context, key string, o *store.GetOptions) (*store.Object, error) {
	var c store.GetOptions
	if o != nil {
		c = *o
	}
	c.IfMatch = ""
	return s.Store.Get(ctx, key, &c)
}

func TestContentionOnEnforcingStore(t *testing.T) {
	s := store.Validate(mem.New())
	res, err := store.ProbeContention(context.Background(), s, store.ContentionOptions{Writers: 8, Rounds: 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range store.ContentionChecks {
		if res.Checks[c].Verdict != store.Pass {
			t.Errorf("%s: %+v", c, res.Checks[c])
		}
	}
	if !res.Passed {
		t.Error("not passed")
	}
	left, err := store.ListAll(context.Background(), s, "")
	if err != nil || len(left) != 0 {
		t.Errorf("probe left %d objects behind (%v)", len(left), err)
	}
}

func TestContentionCatchesIgnoredConditions(t *testing.T) {
	s := store.Validate(ignoring{mem.New()})
	res, err := store.ProbeContention(context.Background(), s, store.ContentionOptions{Writers: 8, Rounds: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res.Checks[store.CheckOneWinner].Verdict != store.Fail {
		t.Errorf("one winner: %+v, want fail on a store that ignores If-None-Match", res.Checks[store.CheckOneWinner])
	}
	if res.Checks[store.CheckStaleDelete].Verdict != store.Fail {
		t.Errorf("stale delete: %+v, want fail", res.Checks[store.CheckStaleDelete])
	}
	if res.Passed {
		t.Error("passed on a store that ignores conditions")
	}
}

func TestProbeOnEnforcingAndIgnoringStores(t *testing.T) {
	ctx := context.Background()
	res, err := store.Probe(ctx, store.Validate(mem.New()), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Coordination != store.CAS {
		t.Errorf("mem: coordination %s (%s)", res.Coordination, res.Reason)
	}
	for _, c := range store.Capabilities {
		if res.Capabilities[c].Verdict != store.Yes {
			t.Errorf("mem: %s = %+v", c, res.Capabilities[c])
		}
	}
	res, err = store.Probe(ctx, store.Validate(ignoring{mem.New()}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Coordination != store.SingleWriter {
		t.Errorf("ignoring: coordination %s", res.Coordination)
	}
	for _, c := range []string{store.CapConditionalCreate, store.CapConditionalReplace, store.CapConditionalDelete, store.CapPinnedRead} {
		if res.Capabilities[c].Verdict != store.No {
			t.Errorf("ignoring: %s = %+v, want no", c, res.Capabilities[c])
		}
	}
	if err := res.RequireCAS(); store.Code(err) != "WHARF_COORDINATION_UNPROVEN" {
		t.Errorf("RequireCAS: %v", err)
	}
}
