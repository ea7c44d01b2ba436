package store_test

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/mem"
)

// refusing answers 501 to conditional puts, like a gateway without conditional writes.
type refusing struct{ store.Store }

func (s refusing) Put(ctx context.Context, key string, body io.Reader, o *store.PutOptions) (store.ObjectInfo, error) {
	if o.Conditional() {
		return store.ObjectInfo{}, &store.Error{Op: "put", Key: key, Kind: store.ErrUnsupported, Status: 501, Code: "NotImplemented"}
	}
	return s.Store.Put(ctx, key, body, o)
}

func TestProbeInconclusiveNeverYes(t *testing.T) {
	res, err := store.Probe(context.Background(), store.Validate(refusing{mem.New()}), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range store.Capabilities {
		r := res.Capabilities[c]
		if r.Verdict != store.Inconclusive || r.Code != "WHARF_PROBE_INCONCLUSIVE" {
			t.Errorf("%s = %+v, want inconclusive", c, r)
		}
	}
	if res.Coordination != store.SingleWriter || !strings.Contains(res.Capabilities[store.CapConditionalCreate].Evidence, "501") {
		t.Errorf("coordination %s, evidence %q", res.Coordination, res.Capabilities[store.CapConditionalCreate].Evidence)
	}
}

func TestProbeClockSkewWarns(t *testing.T) {
	slow := func() time.Time { return time.Now().Add(-10 * time.Minute) }
	res, err := store.Probe(context.Background(), store.Validate(mem.New()), &store.ProbeOptions{Now: slow})
	if err != nil {
		t.Fatal(err)
	}
	if res.ClockSkewSeconds < 590 || res.ClockSkewSeconds > 610 {
		t.Errorf("skew %v, want about 600", res.ClockSkewSeconds)
	}
	if !strings.Contains(res.ClockSkewWarning, "local clock") {
		t.Errorf("warning %q", res.ClockSkewWarning)
	}
	res, _ = store.Probe(context.Background(), store.Validate(mem.New()), nil)
	if res.ClockSkewWarning != "" || res.ClockSkewSeconds != 0 {
		t.Errorf("in-sync clock: skew %v warning %q", res.ClockSkewSeconds, res.ClockSkewWarning)
	}
}
