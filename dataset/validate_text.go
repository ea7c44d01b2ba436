package dataset

import (
	"fmt"

	"github.com/wharfdata/wharf/internal/textfmt"
)

// Text is v for people, as `wharf validate` prints it: the prefix, whether it is certified,
// what was checked, and each problem with its code.
func (v *Validation) Text() string {
	r := textfmt.Rows{Width: 16}
	r.Row("resolved_prefix", "%s", v.ResolvedPrefix)
	r.Row("certified", "%s", textfmt.YesNo(v.Certified))
	r.Row("legacy_run", "%t", v.LegacyRun)
	if v.RunID != "" {
		r.Row("run", "%s (export %s, %s)", v.RunID, v.Export, v.Status)
		r.Row("parts", "%d (%d rows)", v.Parts, v.Rows)
	}
	switch {
	case v.Deep:
		r.Row("checked", "_SUCCESS, manifest.json, every part re-hashed and decoded: rows, schema, UTF-8 (--deep)")
	case v.Hashed:
		r.Row("checked", "_SUCCESS, manifest.json, every part's size, ETag and sha256 (a local directory: its ETags do not prove content)")
	default:
		r.Row("checked", "_SUCCESS, manifest.json, one HEAD per part (size, ETag)")
	}
	if v.LegacyRun {
		r.Row("verdict", "a legacy run: no manifest.json, so nothing is certified; not a failure (exit 0; --strict exits 1)")
	}
	if len(v.Problems) == 0 {
		r.Row("problems", "none")
		return r.String()
	}
	r.Row("problems", "%d", len(v.Problems))
	for _, p := range v.Problems {
		fmt.Fprintf(&r, "  %-22s %s: %s\n", p.Code, p.Key, p.Message)
	}
	return r.String()
}
