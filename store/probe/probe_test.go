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

// TestProbeInconclusiveNamesCause: a capability made inconclusive by a failed request names
// that failure's code (here the 501's WHARF_UNSUPPORTED), for callers that report it.
func TestProbeInconclusiveNamesCause(t *testing.T) {
	res, err := probe.Run(context.Background(), store.New(refusing{mem.New()}, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Capabilities[probe.CapConditionalCreate]; c.Cause != "WHARF_UNSUPPORTED" {
		t.Errorf("conditional create: %+v, want cause WHARF_UNSUPPORTED", c)
	}
}

// TestProbeTagSweepsLeftovers: a tagged probe deletes its sentinel and those that earlier
// probes with its tag left, and nothing else under the probe's prefix.
func TestProbeTagSweepsLeftovers(t *testing.T) {
	ctx := context.Background()
	s := store.New(mem.New(), nil)
	put := func(key string) {
		if _, err := s.Put(ctx, key, strings.NewReader("x"), &store.PutOptions{Size: 1}); err != nil {
			t.Fatal(err)
		}
	}
	put(probe.Prefix + "ship-n1-0123456789abcdef-00112233445566aa") // an earlier run's, killed
	put(probe.Prefix + "ship-n1-0123456789abcdef-ffeeddccbbaa9988")
	put(probe.Prefix + "ship-n2-0123456789abcdef-00112233445566aa") // another node's
	put(probe.Prefix + "00112233445566aa")                          // an untagged probe's
	put(probe.Prefix + "ship-n1-0123456789abcdef-notmine")          // not a sentinel name
	res, err := probe.Run(ctx, s, &probe.Options{Tag: "ship-n1-0123456789abcdef"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Sentinel, probe.Prefix+"ship-n1-0123456789abcdef-") || res.Swept != 2 {
		t.Errorf("sentinel %q, swept %d; want the tag in the key and 2 swept", res.Sentinel, res.Swept)
	}
	objs, err := s.ListAll(ctx, probe.Prefix)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, o := range objs {
		left = append(left, strings.TrimPrefix(o.Key, probe.Prefix))
	}
	want := []string{"00112233445566aa", "ship-n1-0123456789abcdef-notmine", "ship-n2-0123456789abcdef-00112233445566aa"}
	if strings.Join(left, " ") != strings.Join(want, " ") {
		t.Errorf("left under %s: %v, want %v", probe.Prefix, left, want)
	}
	if _, err := probe.Run(ctx, s, &probe.Options{Tag: "bad/tag"}); err == nil {
		t.Error("a tag with a slash was accepted")
	}
}
