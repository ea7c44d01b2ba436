package probe_test

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
	"github.com/wharfdata/wharf/store/mem"
	"github.com/wharfdata/wharf/store/probe"
)

// refusing answers 501 to conditional puts, like a gateway without conditional writes.
type refusing struct{ driver.Bucket }

func (s refusing) Put(ctx context.Context, key string, body io.Reader, o *driver.PutOptions) (driver.ObjectInfo, error) {
	if o.Conditional() {
		return store.ObjectInfo{}, &store.Error{Op: "put", Key: key, Kind: store.ErrUnsupported, Status: 501, Reason: "NotImplemented"}
	}
	return s.Bucket.Put(ctx, key, body, o)
}

func TestProbeInconclusiveNeverYes(t *testing.T) {
	res, err := probe.Run(context.Background(), store.New(refusing{mem.New()}, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range probe.Capabilities {
		r := res.Capabilities[c]
		if r.Verdict != probe.Inconclusive || r.Code != "WHARF_PROBE_INCONCLUSIVE" {
			t.Errorf("%s = %+v, want inconclusive", c, r)
		}
	}
	if res.Coordination != probe.SingleWriter || !strings.Contains(res.Capabilities[probe.CapConditionalCreate].Evidence, "501") {
		t.Errorf("coordination %s, evidence %q", res.Coordination, res.Capabilities[probe.CapConditionalCreate].Evidence)
	}
}

func TestProbeClockSkewWarns(t *testing.T) {
	slow := func() time.Time { return time.Now().Add(-10 * time.Minute) }
	res, err := probe.Run(context.Background(), store.New(mem.New(), nil), &probe.Options{Now: slow})
	if err != nil {
		t.Fatal(err)
	}
	if res.ClockSkewSeconds < 590 || res.ClockSkewSeconds > 610 {
		t.Errorf("skew %v, want about 600", res.ClockSkewSeconds)
	}
	if !strings.Contains(res.ClockSkewWarning, "local clock") {
		t.Errorf("warning %q", res.ClockSkewWarning)
	}
	res, _ = probe.Run(context.Background(), store.New(mem.New(), nil), nil)
	if res.ClockSkewWarning != "" || res.ClockSkewSeconds != 0 {
		t.Errorf("in-sync clock: skew %v warning %q", res.ClockSkewSeconds, res.ClockSkewWarning)
	}
}
