package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wharfdata/wharf/export"
	"github.com/wharfdata/wharf/iceberg"
	"github.com/wharfdata/wharf/internal/testenv"
)

// TestE2EExportIcebergCatalog: with iceberg.catalog the table is kept in a SQL catalog
// (SQLite here, PostgreSQL with a password by reference), named namespace.name: each delta
// run is committed as a version the catalog's row names (metadata/0000N-<uuid>), the rows
// read back at it equal the source's, `wharf table show` reads it, and the bucket holds no
// vN.metadata.json nor hint (the catalog, not the bucket, says which version is current).
func TestE2EExportIcebergCatalog(t *testing.T) {
	for _, db := range []string{"sqlite", "postgres"} {
		t.Run(db, func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join(dir, "demo.db")
			must(t, export.CreateDemo(context.Background(), src, crashRows))
			catalog := "        uri: sqlite://./catalog.db\n"
			c := cli{dir: t.TempDir()} // elsewhere: the config's relative paths are relative to it
			if db == "postgres" {
				srv := testenv.Postgres(t)
				catalog = fmt.Sprintf("        uri: %s\n        name: wharf-e2e-%d\n", srv.URL, time.Now().UnixNano())
				if ref := srv.PasswordRef(t); ref != "" {
					catalog += "        password: " + ref + "\n"
				}
			}
			writeFiles(t, dir, map[string]string{"wharf.yaml": `exports:
  - name: orders
    source: sqlite://./demo.db
    table: orders
    chunk_key: id
    chunk_rows: 250
    mode: delta
    cursor_column: id
    destination: ./lake/{export}/{run_id}/
    iceberg:
      namespace: sales
      catalog:
` + catalog})
			cfg := []string{"-c", filepath.Join(dir, "wharf.yaml")}
			first, _ := exportJSON(t, c, cfg, 0)
			if first.Table == nil || first.Table.Version != 2 || !strings.HasSuffix(first.Table.Catalog, ":sales.orders") ||
				!strings.Contains(first.Table.Metadata, "/metadata/00002-") {
				t.Fatalf("the first run's commit: %+v, want version 2 of sales.orders, its metadata file named", first.Table)
			}
			addOrders(t, src, 10)
			second, _ := exportJSON(t, c, cfg, 0)
			if second.Table.Version != 3 {
				t.Fatalf("the second run's commit: %+v", second.Table)
			}
			if _, err := os.Stat(filepath.Join(dir, "catalog.db")); db == "sqlite" && err != nil {
				t.Errorf("sqlite://./catalog.db is not beside the config: %v", err)
			}
			rows, tbl := readTable(t, second.Table.Metadata, nil)
			sameRows(t, "at the catalog's version", rows, sourceRows(t, src, false))
			if got := tbl.CommitIDs(); !slices.Equal(got, []string{first.RunID, second.RunID}) {
				t.Errorf("the table's runs %v, want both", got)
			}
			entries := entries(t, filepath.Join(dir, "lake", "orders", "metadata"))
			for _, e := range entries {
				if e == "version-hint.text" || strings.HasPrefix(e, "v") {
					t.Errorf("the bucket holds %s: a catalog's table has no bucket versions", e)
				}
			}
			text := c.run(t, append(cfg, "export")...).must(t, 0)
			if !strings.Contains(text.out, "in the catalog as ") || !strings.Contains(text.out, "wharf table show ") {
				t.Errorf("the report's table line:\n%s", text.out)
			}
			show := c.run(t, "table", "show", "--format", "json", second.Table.Metadata).must(t, 0)
			var d iceberg.Description
			must(t, json.Unmarshal([]byte(show.out), &d))
			if len(d.Snapshots) != 2 {
				t.Errorf("table show of the second run's metadata: %d snapshots, want 2", len(d.Snapshots))
			}
		})
	}
}

// TestE2EExportIcebergCatalogRefusals: namespace or name without a catalog, and a catalog
// URL that is neither postgres:// nor sqlite://, or holds a password, are refused by name.
func TestE2EExportIcebergCatalogRefusals(t *testing.T) {
	for _, tc := range []struct{ section, want string }{
		{"    iceberg:\n      namespace: sales\n", "namespace and name name the table in a catalog"},
		{"    iceberg:\n      catalog:\n        uri: mysql://x/y\n", "iceberg.catalog.uri"},
		{"    iceberg:\n      catalog:\n        uri: postgres://u:secret@127.0.0.1:1/db\n", "holds a password"},
	} {
		dir := t.TempDir()
		must(t, export.CreateDemo(context.Background(), filepath.Join(dir, "demo.db"), 10))
		writeFiles(t, dir, map[string]string{"wharf.yaml": `exports:
  - name: orders
    source: sqlite://./demo.db
    table: orders
    chunk_key: id
    destination: ./lake/{export}/{run_id}/
` + tc.section})
		r := cli{dir: dir}.run(t, "-c", "wharf.yaml", "export")
		if r.code == 0 || !strings.Contains(r.err, tc.want) || strings.Contains(r.err+r.out, "secret") {
			t.Errorf("%q: exit %d, stderr %q; want a refusal naming %q, no password", tc.section, r.code, r.err, tc.want)
		}
	}
}
