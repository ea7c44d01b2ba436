package probe_test

import (
	"context"
	"io"
	"testing"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
	"github.com/wharfdata/wharf/store/mem"
	"github.com/wharfdata/wharf/store/probe"
)

// ignoring is a store that ignores every condition, like a server without conditional writes.
type ignoring struct{ driver.Bucket }

func (s ignoring) Put(ctx context.Context, key string, body io.Reader, o *driver.PutOptions) (driver.ObjectInfo, error) {
	var c driver.PutOptions
	if o != nil {
		c = *o
	}
	c.IfMatch, c.IfNoneMatch = "", false
	return s.Bucket.Put(ctx, key, body, &c)
}

func (s ignoring) Delete(ctx context.Context, key string, o *driver.DeleteOptions) error {
	return s.Bucket.Delete(ctx, key, &driver.DeleteOptions{})
}

func (s ignoring) Get(ctx context.Context, key string, o *driver.GetOptions) (*driver.Object, error) {
	var c driver.GetOptions
	if o != nil {
		c = *o
	}
	c.IfMatch = ""
	return s.Bucket.Get(ctx, key, &c)
}

func TestContentionOnEnforcingStore(t *testing.T) {
	s := store.New(mem.New(), nil)
	res, err := probe.Contention(context.Background(), s, probe.ContentionOptions{Writers: 8, Rounds: 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range probe.ContentionChecks {
		if res.Checks[c].Verdict != probe.Pass {
			t.Errorf("%s: %+v", c, res.Checks[c])
		}
	}
	if !res.Passed {
		t.Error("not passed")
	}
	left, err := s.ListAll(context.Background(), "")
	if err != nil || len(left) != 0 {
		t.Errorf("probe left %d objects behind (%v)", len(left), err)
	}
}

func TestContentionCatchesIgnoredConditions(t *testing.T) {
	s := store.New(ignoring{mem.New()}, nil)
	res, err := probe.Contention(context.Background(), s, probe.ContentionOptions{Writers: 8, Rounds: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res.Checks[probe.CheckOneWinner].Verdict != probe.Fail {
		t.Errorf("one winner: %+v, want fail on a store that ignores If-None-Match", res.Checks[probe.CheckOneWinner])
	}
	if res.Checks[probe.CheckStaleDelete].Verdict != probe.Fail {
		t.Errorf("stale delete: %+v, want fail", res.Checks[probe.CheckStaleDelete])
	}
	if res.Passed {
		t.Error("passed on a store that ignores conditions")
	}
}

func TestProbeOnEnforcingAndIgnoringStores(t *testing.T) {
	ctx := context.Background()
	res, err := probe.Run(ctx, store.New(mem.New(), nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Coordination != probe.CAS {
		t.Errorf("mem: coordination %s (%s)", res.Coordination, res.Reason)
	}
	for _, c := range probe.Capabilities {
		if res.Capabilities[c].Verdict != probe.Yes {
			t.Errorf("mem: %s = %+v", c, res.Capabilities[c])
		}
	}
	res, err = probe.Run(ctx, store.New(ignoring{mem.New()}, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Coordination != probe.SingleWriter {
		t.Errorf("ignoring: coordination %s", res.Coordination)
	}
	for _, c := range []string{probe.CapConditionalCreate, probe.CapConditionalReplace, probe.CapConditionalDelete, probe.CapPinnedRead} {
		if res.Capabilities[c].Verdict != probe.No {
			t.Errorf("ignoring: %s = %+v, want no", c, res.Capabilities[c])
		}
	}
	if err := res.RequireCAS(); errcode.NameOf(err) != "WHARF_COORDINATION_UNPROVEN" {
		t.Errorf("RequireCAS: %v", err)
	}
}
