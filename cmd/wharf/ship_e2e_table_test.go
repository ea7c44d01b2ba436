package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/wharfdata/wharf/iceberg"
	"github.com/wharfdata/wharf/internal/icebird"
	"github.com/wharfdata/wharf/ship"
	"github.com/wharfdata/wharf/spool"
)

var shipRowsSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "device", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "reading", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
}, nil)

// shipRows is the record of ids [from, from+n).
func shipRows(from, n int64) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, shipRowsSchema)
	defer b.Release()
	for id := from; id < from+n; id++ {
		b.Field(0).(*array.Int64Builder).Append(id)
		b.Field(1).(*array.StringBuilder).Append("dev-" + strconv.FormatInt(id%7, 10))
		if id%4 == 0 {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.Float64Builder).Append(float64(id) * 1.5)
		}
	}
	return b.NewRecordBatch()
}

// newParquetSpool spools n Parquet files of dataset events (file i holds the ids [100i,
// 100i+10+i)) and one NDJSON file of metrics, and returns the spool and what its table should
// read.
func newParquetSpool(t *testing.T, n int) (*shipSpool, *icebird.Result) {
	t.Helper()
	sp := &shipSpool{dir: filepath.Join(t.TempDir(), "spool"), data: map[uint64][]byte{}}
	info, err := spool.Init(sp.dir)
	must(t, err)
	sp.epoch = info.Epoch
	src := t.TempDir()
	var recs []arrow.RecordBatch
	add := func(name, dataset string, b []byte, records uint64, at time.Time) {
		p := filepath.Join(src, name)
		must(t, os.WriteFile(p, b, 0o644))
		f, err := spool.Add(context.Background(), sp.dir, p, spool.AddOptions{Dataset: dataset, Time: at, Records: records, Clock: spool.ClockSynced})
		must(t, err)
		sp.files = append(sp.files, f)
		sp.data[f.ID] = b
	}
	for i := range int64(n) {
		rec := shipRows(100*i, 10+i)
		recs = append(recs, rec)
		tbl := array.NewTableFromRecords(shipRowsSchema, []arrow.RecordBatch{rec})
		var buf bytes.Buffer
		must(t, pqarrow.WriteTable(tbl, &buf, 1024, nil, pqarrow.DefaultWriterProps()))
		tbl.Release()
		add(fmt.Sprintf("seg-%d.parquet", i), "events", buf.Bytes(), uint64(10+i), time.Date(2026, 11, 29, 10+int(i), 0, 0, 0, time.UTC))
		if i == 1 {
			add("m.ndjson", "metrics", []byte("{\"m\":1}\n"), 1, time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC))
		}
	}
	all := array.NewTableFromRecords(shipRowsSchema, recs)
	defer all.Release()
	for _, r := range recs {
		r.Release()
	}
	want, err := icebird.FromArrow(all)
	must(t, err)
	return sp, want
}

// checkShipTable checks the events table of sp at d: each Parquet file of sp exactly once
// (dups false), or at most once (a table a kill left), and, when complete, the rows want.
func checkShipTable(t *testing.T, d shipDest, sp *shipSpool, want *icebird.Result, complete bool) *iceberg.Table {
	t.Helper()
	ctx := context.Background()
	tbl, err := iceberg.Load(ctx, d.st.Sub("wharf/v1/edge/events"), nil)
	if !complete && err != nil {
		return nil // killed before the first commit made the table
	}
	must(t, err)
	dfs, err := tbl.DataFiles(ctx)
	must(t, err)
	var got, keys []string
	for _, df := range dfs {
		got = append(got, df.FilePath())
	}
	for _, f := range sp.files {
		if f.Dataset == "events" {
			keys = append(keys, d.url+"/"+sp.key(f))
		}
	}
	slices.Sort(got)
	slices.Sort(keys)
	if complete && !slices.Equal(got, keys) || len(slices.Compact(slices.Clone(got))) != len(got) {
		t.Fatalf("the table's data files (complete: %v):\n%s\nwant each Parquet file once:\n%s", complete, strings.Join(got, "\n"), strings.Join(keys, "\n"))
	}
	for _, g := range got {
		if !slices.Contains(keys, g) {
			t.Fatalf("the table holds %s, which is no shipped Parquet file", g)
		}
	}
	if complete {
		at, err := tbl.Iceberg().Scan().ToArrowTable(ctx)
		must(t, err)
		defer at.Release()
		scan, err := icebird.FromArrow(at)
		must(t, err)
		if err := icebird.Compare(want, scan); err != nil {
			t.Fatalf("iceberg-go's scan of the shipped table: %v", err)
		}
	}
	return tbl
}

// TestE2EShipTableKilled kills `wharf ship --iceberg-datasets events` with SIGKILL at each step
// of a file's way into the table: after its upload record (before any commit), after a
// commit's manifest list (before its metadata file), after a commit's metadata file (before
// the hint). After the kill the table holds each file at most once; the restart (--drain)
// commits the rest: each of the six Parquet files in exactly one snapshot, the rows those
// written, on the folder store and MinIO.
func TestE2EShipTableKilled(t *testing.T) {
	kills := []string{"kill-after-record:3", "kill-after-table-manifests:2", "kill-after-table-metadata:3"}
	for _, dest := range []struct {
		name string
		open func(*testing.T) shipDest
	}{{"file", fileShipDest}, {"minio", minioShipDest}} {
		for _, kill := range kills {
			t.Run(dest.name+"/"+strings.Split(kill, ":")[0], func(t *testing.T) {
				d := dest.open(t)
				sp, want := newParquetSpool(t, 6)
				args := d.shipArgs(sp, "--drain", "--iceberg-datasets", "events", "--iceberg-commit-files", "2")
				c := d.c
				c.env = append(slices.Clone(c.env), envTestShip+"="+kill)
				cmd := c.command(args...)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				must(t, cmd.Start())
				waitKilled(t, cmd)
				if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
					t.Fatalf("%s: the kill did not land: exit %d\nstderr: %s", kill, cmd.ProcessState.ExitCode(), stderr.String())
				}
				before := checkShipTable(t, d, sp, want, false)
				if kill == "kill-after-table-metadata:3" && (before == nil || len(before.Snapshots()) != 2) {
					t.Fatalf("killed after the second commit's metadata file: want a table of 2 snapshots")
				}
				r := d.c.run(t, append(slices.Clone(args), "--format", "json")...)
				if r.code != 0 {
					t.Fatalf("restart after %s: exit %d\nstderr: %s", kill, r.code, r.err)
				}
				tbl := checkShipTable(t, d, sp, want, true)
				var st ship.Status
				must(t, json.Unmarshal([]byte(r.out), &st))
				if len(st.Tables) != 1 || st.Tables[0].Version != tbl.Version() || st.Tables[0].Waiting != 0 {
					t.Errorf("the restart's status tables %+v; want version %d, none waiting", st.Tables, tbl.Version())
				}
				again := d.c.run(t, args...)
				if again.code != 0 {
					t.Fatalf("third run: exit %d: %s", again.code, again.err)
				}
				if n := len(checkShipTable(t, d, sp, want, true).Snapshots()); n != len(tbl.Snapshots()) {
					t.Errorf("a run with nothing new made %d snapshots", n-len(tbl.Snapshots()))
				}
			})
		}
	}
}
