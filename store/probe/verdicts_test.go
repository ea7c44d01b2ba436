package probe_test

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/wharfdata/wharf/store"
	_ "github.com/wharfdata/wharf/store/file"
	"github.com/wharfdata/wharf/store/mem"
	"github.com/wharfdata/wharf/store/probe"
	_ "github.com/wharfdata/wharf/store/s3"
)

func TestVerdictsRememberPerStoreAndExpire(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	v := &probe.Verdicts{Path: filepath.Join(t.TempDir(), "wharf", "probes.json"), Now: func() time.Time { return now }}
	proxied := store.Description{Scheme: "s3", Location: "s3://b/some/prefix/", Endpoint: "http://127.0.0.1:1"}
	direct := store.Description{Scheme: "s3", Location: "s3://b/", Endpoint: "http://127.0.0.1:2"}
	res := &probe.Result{Store: proxied, Coordination: probe.SingleWriter, Reason: "create ignored",
		Capabilities: map[string]probe.CapabilityResult{probe.CapConditionalCreate: {Verdict: probe.No}}}
	if err := v.Record(res); err != nil {
		t.Fatal(err)
	}
	got, ok := v.Lookup(store.Description{Scheme: "s3", Location: "s3://b/other/", Endpoint: "http://127.0.0.1:1"})
	if !ok || got.ConditionalCreate != probe.No || got.Store != "s3://b at http://127.0.0.1:1" {
		t.Errorf("the bucket at the same endpoint, another prefix: %+v %v", got, ok)
	}
	if _, ok := v.Lookup(direct); ok {
		t.Error("a verdict for one endpoint answered for another")
	}
	now = now.Add(probe.DefaultMaxAge + time.Minute)
	if _, ok := v.Lookup(proxied); ok {
		t.Error("a stale verdict was trusted")
	}
}

// RequireCreate trusts a remembered "no" without probing, and probes (and remembers) a store
// it has no verdict for.
func TestRequireCreate(t *testing.T) {
	ctx := t.Context()
	v := &probe.Verdicts{Path: filepath.Join(t.TempDir(), "probes.json")}
	s, err := store.Open(ctx, "mem://verdicts-test", nil)
	if err != nil {
		t.Fatal(err)
	}
	probed, err := v.RequireCreate(ctx, s, s.Sub("dst"))
	if err != nil || !probed {
		t.Fatalf("a mem store, first time: probed=%v err=%v", probed, err)
	}
	if probed, err := v.RequireCreate(ctx, s, s); err != nil || probed {
		t.Fatalf("a mem store, remembered: probed=%v err=%v", probed, err)
	}
	if err := v.Record(&probe.Result{Store: s.Describe(), Coordination: probe.SingleWriter,
		Capabilities: map[string]probe.CapabilityResult{probe.CapConditionalCreate: {Verdict: probe.No}}}); err != nil {
		t.Fatal(err)
	}
	probed, err = v.RequireCreate(ctx, s, s)
	if probed || !errors.Is(err, probe.ErrCoordinationUnproven) {
		t.Fatalf("a remembered \"no\": probed=%v err=%v, want ErrCoordinationUnproven without a probe", probed, err)
	}
	// An inconclusive probe (the store did not answer) forgets the earlier verdict: the next
	// call probes again.
	if err := v.Record(&probe.Result{Store: s.Describe(), Coordination: probe.SingleWriter,
		Capabilities: map[string]probe.CapabilityResult{probe.CapConditionalCreate: {Verdict: probe.Inconclusive}}}); err != nil {
		t.Fatal(err)
	}
	if _, ok := v.Lookup(s.Describe()); ok {
		t.Fatal("an inconclusive verdict was remembered")
	}
	if probed, err := v.RequireCreate(ctx, s, s); err != nil || !probed {
		t.Fatalf("after an inconclusive probe: probed=%v err=%v, want a new probe", probed, err)
	}
}

// A store that fails the probe's requests is refused with that failure's code, not as
// unproven, and nothing is remembered for it.
func TestRequireCreateStoreFailing(t *testing.T) {
	ctx := t.Context()
	v := &probe.Verdicts{Path: filepath.Join(t.TempDir(), "probes.json")}
	s := store.New(refusing{mem.New()}, nil)
	probed, err := v.RequireCreate(ctx, s, s)
	if !probed || !errors.Is(err, store.ErrUnsupported) || errors.Is(err, probe.ErrCoordinationUnproven) {
		t.Fatalf("probed=%v err=%v, want the probe's failure (WHARF_UNSUPPORTED), not unproven", probed, err)
	}
	if _, ok := v.Lookup(s.Describe()); ok {
		t.Fatal("a verdict was remembered for a store that did not answer")
	}
}

// Coordination trusts a fresh remembered cas verdict without probing, probes (and remembers)
// otherwise, never trusts a remembered single-writer verdict, and always probes a local
// directory.
func TestCoordinationRemembered(t *testing.T) {
	ctx := t.Context()
	v := &probe.Verdicts{Path: filepath.Join(t.TempDir(), "probes.json")}
	s, err := store.Open(ctx, "mem://coordination-test", nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := v.Coordination(ctx, s)
	if err != nil || r.Coordination != probe.CAS || !r.Remembered.IsZero() || len(r.Capabilities) == 0 {
		t.Fatalf("first: %+v %v, want a probe run now proving cas", r, err)
	}
	r, err = v.Coordination(ctx, s.Sub("other/prefix"))
	if err != nil || r.Coordination != probe.CAS || r.Remembered.IsZero() || len(r.Capabilities) != 0 {
		t.Fatalf("second, same bucket: %+v %v, want the remembered verdict", r, err)
	}
	if err := v.Record(&probe.Result{Store: s.Describe(), Coordination: probe.SingleWriter,
		Capabilities: map[string]probe.CapabilityResult{probe.CapConditionalCreate: {Verdict: probe.No}}}); err != nil {
		t.Fatal(err)
	}
	if r, err = v.Coordination(ctx, s); err != nil || !r.Remembered.IsZero() || r.Coordination != probe.CAS {
		t.Fatalf("after a remembered single-writer verdict: %+v %v, want a new probe", r, err)
	}
	f, err := store.Open(ctx, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if r, err = v.Coordination(ctx, f); err != nil || !r.Remembered.IsZero() {
			t.Fatalf("local directory, call %d: %+v %v, want a probe every time", i, r, err)
		}
	}
	var none *probe.Verdicts
	if r, err = none.Coordination(ctx, s); err != nil || !r.Remembered.IsZero() {
		t.Fatalf("nil Verdicts: %+v %v, want a probe", r, err)
	}
}

// Count counts the uses of a cas verdict across Verdicts sharing the file (two processes)
// and says which is due a check; Checked starts the count again; Forget drops the verdict,
// and a store without a fresh cas verdict is not counted there.
func TestVerdictsCountUsesAndForget(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wharf", "probes.json")
	a, b := &probe.Verdicts{Path: path}, &probe.Verdicts{Path: path}
	d := store.Description{Scheme: "s3", Location: "s3://b/", Endpoint: "http://127.0.0.1:1"}
	if _, ok := a.Count(d, 3); ok {
		t.Fatal("counted a use of a store with no verdict")
	}
	res := &probe.Result{Store: d, Coordination: probe.CAS, Reason: "proven",
		Capabilities: map[string]probe.CapabilityResult{probe.CapConditionalCreate: {Verdict: probe.Yes}}}
	if err := a.Record(res); err != nil {
		t.Fatal(err)
	}
	var due []bool
	for i := range 4 {
		v := a
		if i%2 == 1 {
			v = b
		}
		got, ok := v.Count(d, 3)
		if !ok {
			t.Fatalf("use %d not counted", i+1)
		}
		due = append(due, got)
	}
	if due[0] || due[1] || !due[2] || !due[3] {
		t.Fatalf("due %v, want the third use and every one after it until a check", due)
	}
	b.Checked(d)
	if got, _ := a.Count(d, 3); got {
		t.Error("the first use after a check is due")
	}
	if err := b.Forget(d); err != nil {
		t.Fatal(err)
	}
	if _, ok := a.Lookup(d); ok {
		t.Error("a forgotten verdict is still remembered")
	}
}
