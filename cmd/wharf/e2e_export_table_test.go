package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/wharfdata/wharf/export"
	"github.com/wharfdata/wharf/iceberg"
	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
)

// tableRow is a row of the demo orders table as the tests compare it: the values a reader of
// the Iceberg table and the SQLite source agree on without a conversion.
type tableRow struct {
	Customer string
	Note     string // "" for NULL
	Shipped  bool
	Extra    string // a column added by a later run ("" for NULL or absent)
}

// readTable reads the Iceberg table at url (its location, or one of its metadata files) with
// iceberg-go's own scan (not wharf's writer): its rows by id, failing on an id read twice,
// and the table as loaded.
func readTable(t *testing.T, url string, cfg *store.Config) (map[int64]tableRow, *iceberg.Table) {
	t.Helper()
	ctx := context.Background()
	loc, file, isFile := strings.Cut(url, "/metadata/")
	if !isFile {
		loc = url
	}
	st, err := store.Open(ctx, loc, cfg)
	must(t, err)
	defer st.Close()
	var tbl *iceberg.Table
	if isFile { // a table a catalog keeps: the version its metadata file holds
		tbl, err = iceberg.LoadFile(ctx, st, "metadata/"+file)
	} else {
		tbl, err = iceberg.Load(ctx, st, nil)
	}
	must(t, err)
	at, err := tbl.Iceberg().Scan().ToArrowTable(ctx)
	must(t, err)
	defer at.Release()
	rows := map[int64]tableRow{}
	rdr := array.NewTableReader(at, 0)
	defer rdr.Release()
	for rdr.Next() {
		rec := rdr.RecordBatch()
		col := func(name string) int {
			idx := rec.Schema().FieldIndices(name)
			if len(idx) == 0 {
				return -1
			}
			return idx[0]
		}
		id, cust, note, shipped, extra := col("id"), col("customer"), col("note"), col("shipped"), col("extra")
		for i := range int(rec.NumRows()) {
			k := rec.Column(id).(*array.Int64).Value(i)
			if _, dup := rows[k]; dup {
				t.Fatalf("the table holds id %d twice", k)
			}
			r := tableRow{Customer: rec.Column(cust).(*array.String).Value(i), Shipped: rec.Column(shipped).(*array.Boolean).Value(i)}
			if c := rec.Column(note); c.IsValid(i) {
				r.Note = c.(*array.String).Value(i)
			}
			if extra >= 0 && rec.Column(extra).IsValid(i) {
				r.Extra = rec.Column(extra).(*array.String).Value(i)
			}
			rows[k] = r
		}
	}
	must(t, rdr.Err())
	return rows, tbl
}

// sourceRows reads the same rows from the SQLite source, by an independent query.
func sourceRows(t *testing.T, src string, extra bool) map[int64]tableRow {
	t.Helper()
	db, err := sql.Open("sqlite", src)
	must(t, err)
	defer db.Close()
	q := `SELECT id, customer, COALESCE(note, ''), shipped, ''  FROM orders`
	if extra {
		q = `SELECT id, customer, COALESCE(note, ''), shipped, COALESCE(extra, '') FROM orders`
	}
	rs, err := db.Query(q)
	must(t, err)
	defer rs.Close()
	out := map[int64]tableRow{}
	for rs.Next() {
		var id int64
		var r tableRow
		must(t, rs.Scan(&id, &r.Customer, &r.Note, &r.Shipped, &r.Extra))
		out[id] = r
	}
	must(t, rs.Err())
	return out
}

// sameRows fails t unless got and want hold the same rows.
func sameRows(t *testing.T, what string, got, want map[int64]tableRow) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: the table holds %d rows, the source %d", what, len(got), len(want))
	}
	for _, id := range slices.Sorted(maps.Keys(want)) {
		if got[id] != want[id] {
			t.Fatalf("%s: row %d is %+v in the table, %+v in the source", what, id, got[id], want[id])
		}
	}
}

func execSQL(t *testing.T, src string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", src)
	must(t, err)
	defer db.Close()
	for _, s := range stmts {
		_, err := db.Exec(s)
		must(t, err)
	}
}

// tableExport is a demo export with an iceberg: section on the folder store.
func tableExport(t *testing.T, mode string) (c cli, cfg []string, src, table string) {
	dir := t.TempDir()
	src = filepath.Join(dir, "demo.db")
	must(t, export.CreateDemo(context.Background(), src, crashRows))
	more := ""
	if mode == "delta" {
		more = "    cursor_column: id\n"
	}
	writeFiles(t, dir, map[string]string{"wharf.yaml": fmt.Sprintf(`exports:
  - name: orders
    source: sqlite://./demo.db
    table: orders
    chunk_key: id
    chunk_rows: 250
    mode: %s
%s    destination: ./lake/{export}/{run_id}/
    iceberg: {}
`, mode, more)})
	return cli{dir: dir}, []string{"-c", "wharf.yaml"}, src, "file://" + filepath.Join(dir, "lake", "orders")
}

func exportJSON(t *testing.T, c cli, cfg []string, code int) (exportRun, result) {
	t.Helper()
	r := c.run(t, append(cfg, "export", "--format", "json")...).must(t, code)
	if code != 0 {
		return exportRun{}, r
	}
	return decodeRun(t, r), r
}

// TestE2EExportIcebergFull: each certified full run replaces the table's data files (an
// overwrite snapshot of exactly its parts); the table, read by iceberg-go's scan, holds the
// source's rows once; a rerun's snapshot names its run; `wharf table show` shows it.
func TestE2EExportIcebergFull(t *testing.T) {
	c, cfg, src, url := tableExport(t, "full")
	first, _ := exportJSON(t, c, cfg, 0)
	if first.Table == nil || first.Table.Version != 2 || first.Table.Already {
		t.Fatalf("the first run's table commit: %+v, want metadata v2", first.Table)
	}
	rows, _ := readTable(t, url, nil)
	sameRows(t, "after the first run", rows, sourceRows(t, src, false))

	execSQL(t, src, `DELETE FROM orders WHERE id <= 100`, `UPDATE orders SET note = 'changed' WHERE id = 500`)
	second, _ := exportJSON(t, c, cfg, 0)
	rows, tbl := readTable(t, url, nil)
	sameRows(t, "after the second run", rows, sourceRows(t, src, false))
	cur := tbl.CurrentSnapshot()
	if cur.Summary.Operation != "overwrite" || cur.Summary.Properties["wharf.run-id"] != second.RunID || cur.SnapshotID != second.Table.Snapshot {
		t.Errorf("current snapshot %d %s %v, want the overwrite of run %s (%d)", cur.SnapshotID, cur.Summary.Operation, cur.Summary.Properties, second.RunID, second.Table.Snapshot)
	}
	files, err := tbl.DataFiles(context.Background())
	must(t, err)
	if len(files) != len(second.Parts) {
		t.Fatalf("the table has %d data files, the run %d parts", len(files), len(second.Parts))
	}
	for _, f := range files {
		if !strings.Contains(f.FilePath(), "/"+second.RunID+"/part-"+second.RunID) {
			t.Errorf("data file %s is not one of run %s's parts", f.FilePath(), second.RunID)
		}
	}
	show := c.run(t, "table", "show", "--format", "json", url).must(t, 0)
	var d iceberg.Description
	must(t, json.Unmarshal([]byte(show.out), &d))
	if len(d.Snapshots) != 2 || d.Snapshots[1].Summary["wharf.run-id"] != second.RunID || len(d.DataFiles) != len(second.Parts) {
		t.Errorf("table show: %d snapshots (last %v), %d data files", len(d.Snapshots), d.Snapshots, len(d.DataFiles))
	}
	text := c.run(t, append(cfg, "export")...).must(t, 0)
	if !strings.Contains(text.out, "table:      committed, snapshot ") || !strings.Contains(text.out, "wharf table show ") {
		t.Errorf("export's report names no table commit:\n%s", text.out)
	}
}

// TestE2EExportIcebergDeltaAndSchema: delta runs append their parts; a column added to the
// source evolves the table's schema in the run that first has it (old rows read NULL); a
// column whose type changed is refused by name before the run writes a part.
func TestE2EExportIcebergDeltaAndSchema(t *testing.T) {
	c, cfg, src, url := tableExport(t, "delta")
	exportJSON(t, c, cfg, 0)
	// A hint one version behind (as a kill after a metadata file leaves it): the run loads
	// from it a table without the first run, finds the first run there at its commit, and
	// reports neither a catch-up nor an older version.
	hint := filepath.Join(strings.TrimPrefix(url, "file://"), "metadata", "version-hint.text")
	must(t, os.WriteFile(hint, []byte("1"), 0o644))
	if none, _ := exportJSON(t, c, cfg, 0); none.Table == nil || !none.Table.Empty || none.Table.Snapshot != 0 || none.Table.Version != 2 || len(none.Table.CaughtUp) != 0 {
		t.Fatalf("a delta run of no rows: table %+v, want nothing appended or caught up, at v2", none.Table)
	}
	addOrders(t, src, 10)
	second, _ := exportJSON(t, c, cfg, 0)
	rows, tbl := readTable(t, url, nil)
	sameRows(t, "after two delta runs", rows, sourceRows(t, src, false))
	if ops := snapshotOps(tbl); !slices.Equal(ops, []string{"append", "append"}) || second.Table.Version != 3 {
		t.Fatalf("snapshots %v at v%d, want two appends at v3", ops, second.Table.Version)
	}

	execSQL(t, src, `ALTER TABLE orders ADD COLUMN extra TEXT`,
		fmt.Sprintf(`INSERT INTO orders (id, customer, amount, placed_at, shipped, note, extra) VALUES (%d, 'new', 2.00, '2026-12-02 00:00:00', 1, NULL, 'x')`, crashRows+100))
	exportJSON(t, c, cfg, 0)
	rows, tbl = readTable(t, url, nil)
	sameRows(t, "after a column was added", rows, sourceRows(t, src, true))
	if f, ok := tbl.Schema().FindFieldByName("extra"); !ok || f.ID != 7 {
		t.Fatalf("the table's schema after a column was added: %v", tbl.Schema())
	}

	execSQL(t, src, `ALTER TABLE orders DROP COLUMN note`, `ALTER TABLE orders ADD COLUMN note INTEGER`,
		fmt.Sprintf(`INSERT INTO orders (id, customer, amount, placed_at, shipped, note, extra) VALUES (%d, 'new', 2.00, '2026-12-02 00:00:00', 1, 5, 'y')`, crashRows+101))
	r := c.run(t, append(cfg, "export")...).must(t, 1)
	if !strings.Contains(r.err, "[WHARF_ICEBERG_SCHEMA_CHANGED]") || !strings.Contains(r.err, `column "note" is string in the table, long in the files`) {
		t.Fatalf("a column of another type: %s", r.err)
	}
	last := runsOf(t, c, cfg)[0]
	if last.Parts != 0 || len(partFiles(strings.TrimPrefix(last.Prefix, "file://"))) != 0 {
		t.Errorf("the refused run wrote %d part(s) at %s", last.Parts, last.Prefix)
	}
	if _, tbl2 := readTable(t, url, nil); tbl2.Version() != tbl.Version() {
		t.Errorf("the refused run committed metadata v%d", tbl2.Version())
	}
}

func snapshotOps(tbl *iceberg.Table) []string {
	var ops []string
	for _, s := range tbl.Snapshots() {
		ops = append(ops, string(s.Summary.Operation))
	}
	return ops
}

// TestE2EExportIcebergKilledInTheCommit: a delta export SIGKILLed at each step between its
// _SUCCESS and its table commit (after _SUCCESS; after the commit's manifests; after its
// metadata file, before the hint). The table is then at the old snapshot or the new one, never
// between; the next run commits what the table lacks, so it ends with every certified run's
// rows exactly once and each run in one snapshot.
func TestE2EExportIcebergKilledInTheCommit(t *testing.T) {
	for _, pause := range []string{"after-success", "after-table-manifests", "after-table-metadata"} {
		t.Run(pause, func(t *testing.T) {
			c, cfg, src, url := tableExport(t, "delta")
			first, _ := exportJSON(t, c, cfg, 0)
			addOrders(t, src, 10)
			metaDir := filepath.Join(strings.TrimPrefix(url, "file://"), "metadata")
			before := len(entries(t, metaDir))
			killWhen(t, c, cfg, pause+":30s", func() bool {
				runs := runsOf(t, c, cfg)
				if runs[0].RunID == first.RunID {
					return false
				}
				switch n := len(entries(t, metaDir)); pause {
				case "after-success": // before the run is journaled succeeded, too
					_, err := os.Stat(filepath.Join(strings.TrimPrefix(runs[0].Prefix, "file://"), "_SUCCESS"))
					return err == nil
				case "after-table-manifests":
					return n >= before+2 // a manifest and the manifest list
				default:
					return slices.Contains(entries(t, metaDir), "v3.metadata.json")
				}
			})
			killed := runsOf(t, c, cfg)[0]
			rows, tbl := readTable(t, url, nil)
			switch {
			case pause == "after-table-metadata":
				if !tbl.Has(killed.RunID) || len(rows) != crashRows+10 {
					t.Fatalf("killed after its metadata file: the table holds %d rows and run %s: %v", len(rows), killed.RunID, tbl.Has(killed.RunID))
				}
				// Reading the table put the hint right; put it back one version behind, as the
				// kill left it, so that the next run loads (from the hint) a table without the
				// killed run and finds it there only at its commit.
				if err := os.WriteFile(filepath.Join(metaDir, "version-hint.text"), []byte("2"), 0o644); err != nil {
					t.Fatal(err)
				}
			case tbl.Has(killed.RunID) || len(rows) != crashRows:
				t.Fatalf("killed before its metadata file: the table holds %d rows, want the old %d", len(rows), crashRows)
			}
			addOrders2(t, src, 5)
			next, _ := exportJSON(t, c, cfg, 0)
			rows, tbl = readTable(t, url, nil)
			sameRows(t, "after the next run", rows, sourceRows(t, src, false))
			want := []string{first.RunID, killed.RunID, next.RunID}
			if got := tbl.CommitIDs(); !slices.Equal(got, want) {
				t.Fatalf("the table's runs %v, want %v", got, want)
			}
			caughtUp := pause != "after-table-metadata"
			if got := slices.Equal(next.Table.CaughtUp, []string{killed.RunID}); got != caughtUp {
				t.Errorf("the next run caught up %v; want the killed run: %v", next.Table.CaughtUp, caughtUp)
			}
		})
	}
}

// addOrders2 adds n more orders after those addOrders added.
func addOrders2(t *testing.T, src string, n int) {
	t.Helper()
	for i := range n {
		execSQL(t, src, fmt.Sprintf(`INSERT INTO orders (id, customer, amount, placed_at, shipped, note) VALUES (%d, 'later', 1.00, '2026-12-03 00:00:00', 1, 'n')`, crashRows+50+i))
	}
}

// TestE2EExportIcebergOnMinIO: the same commits on MinIO, under state: bucket (the table
// beside the export's log); through a proxy that strips conditions the export is refused
// before its first part (WHARF_COORDINATION_UNPROVEN), as leases are.
func TestE2EExportIcebergOnMinIO(t *testing.T) {
	x := newLeasedExport(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"wharf.yaml": x.config(0, "    mode: delta\n    cursor_column: id\n    iceberg: {}\n", "orders/{date}/")})
	c := cli{dir: dir, env: []string{"WHARF_NODE_ID=host-a"}}
	cfg := []string{"-c", "wharf.yaml"}
	exportJSON(t, c, cfg, 0)
	addOrders(t, x.src, 10)
	second, _ := exportJSON(t, c, cfg, 0)
	url := "s3://" + x.bucket + "/orders"
	rows, tbl := readTable(t, url, x.srv.StoreConfig(t))
	sameRows(t, "on MinIO", rows, sourceRows(t, x.src, false))
	if !tbl.Has(second.RunID) || len(tbl.Snapshots()) != 2 {
		t.Fatalf("the table on MinIO: %d snapshots, run %s in it: %v", len(tbl.Snapshots()), second.RunID, tbl.Has(second.RunID))
	}

	srv := testenv.MinIO(t)
	proxy, behind := testenv.FaultProxy(t, srv)
	proxy.StripConditions(true)
	pdir := t.TempDir()
	ak, sk := srv.Refs(t)
	writeFiles(t, pdir, map[string]string{"wharf.yaml": fmt.Sprintf(`exports:
  - name: orders
    source: sqlite://%s
    table: orders
    chunk_key: id
    destination: s3://%s/proxied/{run_id}/
    iceberg: {}
    store:
      endpoint: %s
      region: %s
      access_key_id: %s
      secret_access_key: %s
`, x.src, x.bucket, behind.Endpoint, srv.Region, ak, sk)})
	pc := cli{dir: pdir, env: []string{"WHARF_ENDPOINT_ALLOWLIST=127.0.0.1"}}
	r := pc.run(t, "-c", "wharf.yaml", "export").must(t, 1)
	if !strings.Contains(r.err, "[WHARF_COORDINATION_UNPROVEN]") || !strings.Contains(r.err, "iceberg table") {
		t.Fatalf("an export to a table behind a condition-stripping proxy: %s", r.err)
	}
	if objs, err := x.s.ListAll(context.Background(), "proxied/"); err != nil || slices.ContainsFunc(objs, func(o store.ObjectInfo) bool { return strings.Contains(o.Key, "/part-") }) {
		t.Errorf("the refused export wrote parts (%v): %v", err, objs)
	}
}

// TestE2ERepairCommitsToTheTable: a repair of a run in the table puts its new parts in place
// of the parts they replace, in one snapshot: the table then reads the source as the repaired
// manifest does (the changed chunk once, as it is now). Run again, the repair finds itself in
// the table and commits nothing more.
func TestE2ERepairCommitsToTheTable(t *testing.T) {
	c, cfg, src, url := tableExport(t, "full")
	exportJSON(t, c, cfg, 0)
	execSQL(t, src, `DELETE FROM orders WHERE id = 260`, `UPDATE orders SET note = 'changed' WHERE id = 300`)
	if rows, _ := readTable(t, url, nil); len(rows) != crashRows || rows[300].Note == "changed" {
		t.Fatalf("the table before the repair: %d rows, row 300 %+v", len(rows), rows[300])
	}
	done := decodePlan(t, c.run(t, append(cfg, "repair", "--execute", "--format", "json")...).must(t, 0))
	if !done.Executed || len(done.Chunks) != 1 || done.Table == nil || done.Table.Already {
		t.Fatalf("the repair: %+v, table %+v", done, done.Table)
	}
	rows, tbl := readTable(t, url, nil)
	sameRows(t, "after the repair", rows, sourceRows(t, src, false))
	if cur := tbl.CurrentSnapshot(); cur.SnapshotID != done.Table.Snapshot || cur.Summary.Properties["wharf.repair-id"] != done.RepairID {
		t.Errorf("the current snapshot %d %v, want the repair's %d", cur.SnapshotID, cur.Summary.Properties, done.Table.Snapshot)
	}
	again := decodePlan(t, c.run(t, append(cfg, "repair", "--execute", "--format", "json")...).must(t, 0))
	if again.Executed || again.Table == nil || !again.Table.Already {
		t.Fatalf("the repair run again: %+v, table %+v; want nothing to do, already in the table", again, again.Table)
	}
	if _, tbl2 := readTable(t, url, nil); tbl2.Version() != tbl.Version() {
		t.Errorf("the repair run again committed v%d", tbl2.Version())
	}
}

// TestE2EExportIcebergRevokedRunIsNotCommitted: a holder stopped (SIGSTOP) between its
// certificate and its manifest is taken over; the next holder journals the run failed, exports
// its window again and commits that to the table. Continued, the stopped holder writes its
// late manifest and _SUCCESS (a fence guards the log, not puts in flight), but it must not
// commit its revoked run to the table: the window's rows would be in it twice.
func TestE2EExportIcebergRevokedRunIsNotCommitted(t *testing.T) {
	x := newLeasedExport(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"wharf.yaml": x.config(10*time.Second, "    mode: delta\n    cursor_column: id\n    iceberg: {}\n", "orders/{run_id}/")})
	c := cli{dir: dir, env: []string{"WHARF_NODE_ID=host-a", envTestPause + "=before-manifest:3s"}}
	cfg := []string{"-c", "wharf.yaml"}
	a := start(t, c.command(append(cfg, "export")...))
	pollUntil(t, 30*time.Second, "the certificate in the log", x.headCertifies)
	must(t, a.cmd.Process.Signal(syscall.SIGSTOP))
	stopped := runsOf(t, c, cfg)[0]
	next := decodeRun(t, otherHost(c).run(t, append(cfg, "export", "--format", "json")...).must(t, 0))
	must(t, a.cmd.Process.Signal(syscall.SIGCONT))
	if code := a.wait(); code == 0 {
		t.Errorf("the continued, fenced holder exited 0:\n%s", a.err.String())
	}
	url := "s3://" + x.bucket + "/orders"
	rows, tbl := readTable(t, url, x.srv.StoreConfig(t))
	sameRows(t, "after the revoked run's holder went on", rows, sourceRows(t, x.src, false))
	if tbl.Has(stopped.RunID) || !tbl.Has(next.RunID) {
		t.Fatalf("the table holds runs %v: want %s, never the revoked %s", tbl.CommitIDs(), next.RunID, stopped.RunID)
	}
}
