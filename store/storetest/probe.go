package storetest

import (
	"testing"

	"github.com/wharfdata/wharf/store/probe"
)

// probedCaps are the capabilities every backend's probe must answer definitively: the test
// servers always can.
var probedCaps = []string{
	probe.CapConditionalCreate, probe.CapConditionalReplace, probe.CapConditionalDelete,
	probe.CapPinnedRead, probe.CapUserMetadata, probe.CapListAfterWrite,
}

// probe runs the probe on a fresh store and records its verdicts for the cases that
// follow. It asserts that every verdict is definitive, agrees with Harness.Want, and that the
// coordination mode follows from the verdicts. The suite's own metadata and listing cases
// require user_metadata and list_after_write, so the probe must say yes to both.
func (su *suite) probe(t *testing.T) {
	t.Helper()
	s := su.h.Open(t)
	res, err := su.h.Probe(t.Context(), s)
	if err != nil {
		t.Errorf("%s: probe: %v", su.h.Name, err)
		return
	}
	caps := map[string]string{}
	for _, c := range probedCaps {
		r, ok := res.Capabilities[c]
		switch {
		case !ok:
			t.Errorf("%s: probe reported no verdict for %s", su.h.Name, c)
		case r.Verdict != probe.Yes && r.Verdict != probe.No:
			t.Errorf("%s: probe: %s is %q (%s), want a definitive yes or no", su.h.Name, c, r.Verdict, r.Evidence)
		default:
			caps[c] = r.Verdict
		}
		if want, ok := su.h.Want[c]; ok && r.Verdict != want {
			t.Errorf("%s: probe: %s is %q (%s), but the harness declares %q", su.h.Name, c, r.Verdict, r.Evidence, want)
		}
	}
	for _, c := range []string{probe.CapUserMetadata, probe.CapListAfterWrite} {
		if v, ok := caps[c]; ok && v != probe.Yes {
			t.Errorf("%s: probe: %s is %q, but every backend must have it", su.h.Name, c, v)
		}
	}
	wantMode := probe.SingleWriter
	if caps[probe.CapConditionalCreate] == probe.Yes && caps[probe.CapConditionalReplace] == probe.Yes {
		wantMode = probe.CAS
	}
	if res.Coordination != wantMode {
		t.Errorf("%s: probe: coordination %q (%s), want %q from its verdicts", su.h.Name, res.Coordination, res.Reason, wantMode)
	}
	if res.Sentinel != "" {
		if _, err := s.Head(t.Context(), res.Sentinel); err == nil {
			t.Errorf("%s: probe left its sentinel %q behind", su.h.Name, res.Sentinel)
		}
	}
	su.caps = caps
}

// verdict returns the verdict for capability c that the cases must observe: the probe's, or,
// when the probe gave none, the harness's.
func (su *suite) verdict(t *testing.T, c string) string {
	t.Helper()
	if v, ok := su.caps[c]; ok {
		return v
	}
	if v, ok := su.h.Want[c]; ok {
		return v
	}
	t.Fatalf("%s: neither the probe nor the harness gives a verdict for %s", su.h.Name, c)
	return ""
}
