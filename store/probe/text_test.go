package probe

import (
	"bytes"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/store"
)

func TestWriteProbe(t *testing.T) {
	r := &Result{
		Store:        store.Description{Scheme: "s3", Location: "s3://b", Endpoint: "http://127.0.0.1:9000"},
		Coordination: SingleWriter,
		Reason:       "conditional replace not proven",
		Capabilities: map[string]CapabilityResult{
			CapConditionalCreate:  {Verdict: Yes, Evidence: "second create refused"},
			CapConditionalReplace: {Verdict: Inconclusive, Evidence: "HTTP 501\nfrom the store", Code: "WHARF_PROBE_INCONCLUSIVE"},
			"extra_thing":         {Verdict: No, Evidence: "n/a"},
		},
		ClockSkewSeconds: 400,
		ClockSkewWarning: "store clock is 400s ahead: sync the local clock",
	}
	var b bytes.Buffer
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"store:         s3://b (s3, endpoint http://127.0.0.1:9000)\n",
		"coordination:  single-writer\n",
		"clock skew:    +400.0s",
		"WARNING:       store clock is 400s ahead",
		"conditional_replace  inconclusive [WHARF_PROBE_INCONCLUSIVE]  HTTP 501 from the store\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("probe output lacks %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "conditional_create") > strings.Index(out, "conditional_replace") ||
		strings.Index(out, "conditional_replace") > strings.Index(out, "extra_thing") {
		t.Errorf("capabilities not in report order:\n%s", out)
	}
}
