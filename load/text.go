package load

import (
	"fmt"
	"strings"
)

// Text is r for people, as `wharf load` prints it.
func (r *Result) Text() string {
	var b strings.Builder
	row := func(k, format string, a ...any) { fmt.Fprintf(&b, "%-9s %s\n", k+":", fmt.Sprintf(format, a...)) }
	row("prefix", "%s", r.Prefix)
	row("run", "%s (export %s, manifest sha256 %s)", r.RunID, r.Export, r.ManifestSHA256)
	what := string(r.Mode)
	if r.Created {
		what += ", table created"
	}
	row("table", "%s (%s)", r.Table, what)
	if !r.Loaded {
		row("loaded", "no: %s", r.Note)
		return b.String()
	}
	row("loaded", "%d rows from %d parts (%d bytes) in %.2fs", r.Rows, r.Parts, r.Bytes, float64(r.DurationMS)/1000)
	return b.String()
}
