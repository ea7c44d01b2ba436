package readback

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/export"
)

// TestDuckDBReadsOnlyTheCertifiedRun: three runs of a 2,500-row export to one prefix leave
// three runs' parts there; DuckDB reading the manifest's parts reads 2,500 rows, and a glob of
// the directory reads 7,500. With superseded: move, earlier runs' parts go under
// _superseded/<run_id>/ once each run is certified, and the directory's glob reads 2,500.
func TestDuckDBReadsOnlyTheCertifiedRun(t *testing.T) {
	ctx := context.Background()
	src := filepath.Join(t.TempDir(), "demo.db")
	if err := export.CreateDemo(ctx, src, 2500); err != nil {
		t.Fatal(err)
	}
	duck, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer duck.Close()
	count := func(from string) int64 {
		var n int64
		if err := duck.QueryRow("SELECT count(*) FROM " + from).Scan(&n); err != nil {
			t.Fatalf("%s: %v", from, err)
		}
		return n
	}
	for policy, wantGlob := range map[export.SupersededPolicy]int64{export.SupersededKeep: 7500, export.SupersededMove: 2500} {
		dir := filepath.Join(t.TempDir(), "out")
		e := export.Export{Name: "orders", Source: "sqlite://" + src, Table: "orders", ChunkKey: "id", ChunkRows: 1000,
			Destination: dir + "/", Superseded: policy}
		state := filepath.Join(t.TempDir(), "state.db")
		var res *export.Result
		for range 3 {
			if res, err = export.Run(ctx, e, export.Options{StatePath: state}); err != nil {
				t.Fatal(err)
			}
		}
		v, err := dataset.ValidateURL(ctx, dir, &e.Store, true)
		if err != nil || !v.Certified || v.RunID != res.RunID {
			t.Fatalf("%s: validate: %v %+v", policy, err, v)
		}
		files := v.PartURLs(dir)
		if got := count("read_parquet(['" + strings.Join(files, "', '") + "'])"); got != 2500 {
			t.Errorf("%s: the manifest's parts hold %d rows, want 2500", policy, got)
		}
		if got := count("read_parquet('" + dir + "/*.parquet')"); got != wantGlob {
			t.Errorf("%s: the directory's glob reads %d rows, want %d", policy, got, wantGlob)
		}
	}
}
