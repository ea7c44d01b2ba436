package reconcile

import (
	"fmt"
	"strings"
	"text/tabwriter"
)

// Text is r for people, as `wharf reconcile` prints it: the run and its window, the count of
// chunks by status, a table of chunks with up to three differing figures each (--format json
// has them all), and what a mismatch most likely means.
func (r *Report) Text() string {
	var b strings.Builder
	row := func(k, format string, a ...any) { fmt.Fprintf(&b, "%-12s %s\n", k+":", fmt.Sprintf(format, a...)) }
	row("prefix", "%s", r.Prefix)
	how := string(r.Mode)
	if r.Consistency != "" {
		how += ", consistency " + string(r.Consistency)
	}
	row("run", "%s (export %s, %s)", r.RunID, r.Export, how)
	if r.Cursor != nil {
		row("window", "%s > %s and <= %s", r.Cursor.Column, orNone(r.Cursor.From.String()), orNone(r.Cursor.To.String()))
	}
	if r.Note != "" {
		row("note", "%s", r.Note)
	}
	row("chunks", "%d: %d match, %d mismatch, %d unknown", len(r.Chunks), r.Matched, r.Mismatched, r.Unknown)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CHUNK\tSTATUS\tSOURCE ROWS\tPART ROWS\tDETAIL")
	notCompared := 0
	for _, c := range r.Chunks {
		notCompared += len(c.NotCompared)
		var detail []string
		for i, d := range c.Differences {
			if i == 3 { // the rest are in --format json
				detail = append(detail, fmt.Sprintf("%d more", len(c.Differences)-i))
				break
			}
			if d.SourceValue != nil || d.PartValue != nil {
				detail = append(detail, fmt.Sprintf("%s: source %s, part %s", d.Figure, value(d.SourceValue), value(d.PartValue)))
				continue
			}
			detail = append(detail, fmt.Sprintf("%s: source %s, part %s", d.Figure, figure(d.Source), figure(d.Part)))
		}
		if c.Reason != "" {
			detail = append(detail, c.Reason)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", c.Chunk, c.Status, figure(c.SourceRows), figure(c.PartRows), strings.Join(detail, "; "))
	}
	tw.Flush()
	if notCompared > 0 {
		fmt.Fprintf(&b, "not compared: %d figure(s) that cannot be compared exactly (listed by --format json)\n", notCompared)
	}
	if r.Mismatched > 0 {
		fmt.Fprintf(&b, "a source changed since the run is the expected cause of a mismatch (the run was read with consistency %s)\n", orNone(string(r.Consistency)))
	}
	return b.String()
}

func figure(v *int64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprint(*v)
}

// value is a min or max of text, quoted, in at most 40 bytes.
func value(v *string) string {
	if v == nil {
		return "-"
	}
	s := *v
	if len(s) > 40 {
		s = strings.ToValidUTF8(s[:40], "") + "…"
	}
	return fmt.Sprintf("%q", s)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
