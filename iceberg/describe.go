package iceberg

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/wharfdata/wharf/internal/textfmt"
)

// Description is a table as `wharf table show` prints it: where it is, its current schema,
// every snapshot (oldest first) and the data files of the current one. The JSON schema is
// additive only.
type Description struct {
	Location      string          `json:"location"`
	Version       int             `json:"version"`        // N of metadata/vN.metadata.json
	FormatVersion int             `json:"format_version"` // Iceberg's table format, 1 to 3
	UUID          string          `json:"uuid"`
	CurrentID     int64           `json:"current_snapshot_id,omitempty"`
	Schema        []Field         `json:"schema"`
	Snapshots     []SnapshotEntry `json:"snapshots"`
	DataFiles     []DataFileEntry `json:"data_files"`
}

// Field is one column of the schema.
type Field struct {
	ID       int    `json:"id"`
	Name     string `json:"name"`
	Type     string `json:"type"`
	Required bool   `json:"required"`
}

// SnapshotEntry is one snapshot: its operation and the summary iceberg-go wrote for it.
type SnapshotEntry struct {
	ID        int64             `json:"id"`
	Parent    int64             `json:"parent_id,omitempty"`
	Sequence  int64             `json:"sequence_number"`
	Time      time.Time         `json:"time"`
	Operation string            `json:"operation"`
	Summary   map[string]string `json:"summary"`
}

// DataFileEntry is one data file of the current snapshot.
type DataFileEntry struct {
	Path    string `json:"path"`
	Records int64  `json:"records"`
	Bytes   int64  `json:"bytes"`
}

// Describe reads t's current snapshot's manifests for its data files, and describes t.
func (t *Table) Describe(ctx context.Context) (*Description, error) {
	md := t.Metadata()
	d := &Description{Location: t.Location(), Version: t.Version(), FormatVersion: md.Version(), UUID: md.TableUUID().String(),
		Schema: []Field{}, Snapshots: []SnapshotEntry{}, DataFiles: []DataFileEntry{}}
	if cur := md.CurrentSnapshot(); cur != nil {
		d.CurrentID = cur.SnapshotID
	}
	for _, f := range md.CurrentSchema().Fields() {
		d.Schema = append(d.Schema, Field{ID: f.ID, Name: f.Name, Type: f.Type.String(), Required: f.Required})
	}
	for _, s := range md.Snapshots() {
		e := SnapshotEntry{ID: s.SnapshotID, Sequence: s.SequenceNumber, Time: time.UnixMilli(s.TimestampMs).UTC(), Summary: map[string]string{}}
		if s.ParentSnapshotID != nil {
			e.Parent = *s.ParentSnapshotID
		}
		if s.Summary != nil {
			e.Operation = string(s.Summary.Operation)
			maps.Copy(e.Summary, s.Summary.Properties)
		}
		d.Snapshots = append(d.Snapshots, e)
	}
	files, err := t.DataFiles(ctx)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		d.DataFiles = append(d.DataFiles, DataFileEntry{Path: f.FilePath(), Records: f.Count(), Bytes: f.FileSizeBytes()})
	}
	return d, nil
}

// WriteText writes d for a person: the table, its columns, its snapshots and its files.
func (d *Description) WriteText(w io.Writer) error {
	r := textfmt.Rows{Width: 17}
	r.Row("table", "%s", d.Location)
	r.Row("metadata", "v%d (Iceberg format %d), uuid %s", d.Version, d.FormatVersion, d.UUID)
	cur := "none (no data committed yet)"
	if d.CurrentID != 0 {
		cur = fmt.Sprint(d.CurrentID)
	}
	r.Row("current snapshot", "%s", cur)
	var records, bytes int64
	for _, f := range d.DataFiles {
		records, bytes = records+f.Records, bytes+f.Bytes
	}
	r.Row("data", "%d file(s), %d record(s), %s", len(d.DataFiles), records, textfmt.Size(bytes))
	b := &r.Builder
	fmt.Fprintf(b, "\nschema:\n")
	for _, f := range d.Schema {
		req := "optional"
		if f.Required {
			req = "required"
		}
		fmt.Fprintf(b, "  %3d  %-24s %-16s %s\n", f.ID, f.Name, f.Type, req)
	}
	fmt.Fprintf(b, "\nsnapshots (oldest first):\n")
	if len(d.Snapshots) == 0 {
		fmt.Fprintf(b, "  none\n")
	}
	for _, s := range d.Snapshots {
		parent := "-"
		if s.Parent != 0 {
			parent = fmt.Sprint(s.Parent)
		}
		fmt.Fprintf(b, "  %s  %-20d parent %-20s %-10s %s\n", textfmt.Time(s.Time), s.ID, parent, s.Operation, summary(s.Summary))
	}
	fmt.Fprintf(b, "\ndata files of the current snapshot:\n")
	if len(d.DataFiles) == 0 {
		fmt.Fprintf(b, "  none\n")
	}
	for _, f := range d.DataFiles {
		fmt.Fprintf(b, "  %10d records %10s  %s\n", f.Records, textfmt.Size(f.Bytes), f.Path)
	}
	_, err := r.WriteTo(w)
	return err
}

// summary is the counts of a snapshot's summary that say what it changed, in a stable order.
func summary(p map[string]string) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(p)) {
		if strings.HasPrefix(k, "added-") || strings.HasPrefix(k, "deleted-") || k == "total-records" || k == "total-data-files" {
			out = append(out, k+"="+p[k])
		}
	}
	return strings.Join(out, " ")
}
