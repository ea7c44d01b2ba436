package repair

import (
	"fmt"
	"strings"
	"text/tabwriter"
)

// Text is p for people, as `wharf repair` prints it: the run, the chunks to repair (and, once
// executed, the parts that replaced them), and what to do next.
func (p *Plan) Text() string {
	var b strings.Builder
	row := func(k, format string, a ...any) { fmt.Fprintf(&b, "%-8s %s\n", k+":", fmt.Sprintf(format, a...)) }
	row("prefix", "%s", p.Prefix)
	row("run", "%s (export %s)", p.RunID, p.Export)
	if p.Note != "" {
		row("note", "%s", p.Note)
	}
	if t := p.Table; t != nil {
		how := "committed"
		if t.Already {
			how = "already in it"
		}
		row("table", "%s %s, snapshot %d (metadata v%d): the new parts in place of the old", t.Location, how, t.Snapshot, t.Version)
	}
	switch {
	case len(p.Chunks) == 0 && p.Note == "":
		row("repair", "nothing to do: every chunk matches")
		return b.String()
	case len(p.Chunks) == 0:
		return b.String()
	case p.Executed:
		row("repair", "%s: %d chunk(s) read again from the source, new parts beside the old, manifest.json and _SUCCESS written", p.RepairID, len(p.Chunks))
	default:
		row("plan", "%d chunk(s) to read again from the source (nothing written: add --execute)", len(p.Chunks))
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	if p.Executed {
		fmt.Fprintln(tw, "CHUNK\tSTATUS\tREPLACED\tBY\tROWS")
		for _, a := range p.Chunks {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\n", a.Chunk, a.Status, a.Part, a.NewPart, *a.Rows)
		}
	} else {
		fmt.Fprintln(tw, "CHUNK\tSTATUS\tPART\tWHY")
		for _, a := range p.Chunks {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", a.Chunk, a.Status, a.Part, a.Reason)
		}
	}
	tw.Flush()
	return b.String()
}
