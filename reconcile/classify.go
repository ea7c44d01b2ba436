package reconcile

import (
	"fmt"
	"strings"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/export"
)

// Classify compares the source's figures for part p's chunk with the part's own, and returns
// the chunk's verdict. reason, when set, is why the part cannot be read (the chunk is
// unknown); src is nil when the source was not queried, pf nil when the part was not read.
func Classify(p dataset.Part, src *export.ChunkFigures, pf *PartFigures, reason string) Chunk {
	c := Chunk{Chunk: p.Chunk, Part: p.Key, Differences: []Difference{}, NotCompared: []string{}}
	if src != nil {
		c.SourceRows = ptr(src.Rows)
	}
	if pf != nil {
		c.PartRows = ptr(pf.Rows)
	}
	switch {
	case reason != "":
		c.Status, c.Reason = Unknown, reason
		return c
	case src == nil || pf == nil:
		c.Status, c.Reason = Unknown, "nothing to compare"
		return c
	}
	differ := func(figure string, s, p *int64) {
		if !same(s, p) {
			c.Differences = append(c.Differences, Difference{Figure: figure, Source: s, Part: p})
		}
	}
	differText := func(figure string, s, p *string) {
		if (s == nil) != (p == nil) || s != nil && *s != *p {
			c.Differences = append(c.Differences, Difference{Figure: figure, SourceValue: clip(s), PartValue: clip(p)})
		}
	}
	differ("rows", ptr(src.Rows), ptr(pf.Rows))
	if pf.NoColumns != "" {
		c.NotCompared = append(c.NotCompared, "every column figure: "+pf.NoColumns)
	}
	var missing []string
	for _, sc := range src.Columns {
		col := "column " + sc.Name
		if !sc.Found {
			c.Differences = append(c.Differences, Difference{Figure: col + ": not in the source"})
			continue
		}
		if pf.NoColumns != "" {
			continue
		}
		cs := pf.Columns[sc.Name]
		switch {
		case cs == nil:
			missing = append(missing, col+": not in the part's footer")
			continue
		case cs.Nested:
			c.NotCompared = append(c.NotCompared, col+": a nested column, whose Parquet null counts are its leaves'")
			continue
		case sc.NonNullInexact != "":
			c.NotCompared = append(c.NotCompared, col+" non-null: "+sc.NonNullInexact)
		case !cs.HasNulls:
			missing = append(missing, col+" non-null: "+cs.MissingStat)
		default:
			differ(col+" non-null", ptr(sc.NonNull), ptr(pf.Rows-cs.Nulls))
		}
		switch {
		case sc.Order == "":
			c.NotCompared = append(c.NotCompared, col+" min, max: its type's do not compare exactly with Parquet's")
		case cs.Kind != sc.Order:
			c.NotCompared = append(c.NotCompared, fmt.Sprintf("%s min, max: the part does not store it as %s", col, kindName[sc.Order]))
		case sc.Order == export.OrderFloat && (isNaN(sc.MinText) || isNaN(sc.MaxText)):
			c.NotCompared = append(c.NotCompared, col+" min, max: the source holds NaN, which Parquet statistics leave out")
		case !cs.HasMinMax && sc.Order == export.OrderText:
			// A writer leaves out a min or max longer than its limit (4 KiB for wharf's).
			c.NotCompared = append(c.NotCompared, col+" min, max: "+cs.MissingStat+" (a value longer than the writer keeps in statistics)")
		case !cs.HasMinMax:
			missing = append(missing, col+" min, max: "+cs.MissingStat)
		case sc.Order == export.OrderInteger:
			differ(col+" min", sc.Min, cs.Min)
			differ(col+" max", sc.Max, cs.Max)
		default:
			differText(col+" min", sc.MinText, cs.MinText)
			differText(col+" max", sc.MaxText, cs.MaxText)
		}
	}
	switch {
	case len(c.Differences) > 0:
		c.Status = Mismatch
	case len(missing) > 0:
		c.Status, c.Reason = Unknown, strings.Join(missing, "; ")
	default:
		c.Status = Match
	}
	return c
}

var kindName = map[export.Order]string{export.OrderInteger: "an integer", export.OrderFloat: "a float",
	export.OrderText: "UTF-8 text", export.OrderDecimal: "a decimal"}

// maxValue bounds a text value in a Difference: the comparison is of the whole value, the
// report shows its start (a part's statistics keep up to 4 KiB).
const maxValue = 256

func clip(s *string) *string {
	if s == nil || len(*s) <= maxValue {
		return s
	}
	v := fmt.Sprintf("%s… (%d bytes)", strings.ToValidUTF8((*s)[:maxValue], ""), len(*s))
	return &v
}

func isNaN(s *string) bool { return s != nil && *s == "NaN" }

func ptr(v int64) *int64 { return &v }

func same(a, b *int64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}
