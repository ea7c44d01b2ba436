// Package readback holds no code: its tests read what package export writes with an engine
// nobody here wrote (DuckDB, through github.com/duckdb/duckdb-go/v2) and compare row counts,
// per-column sums or ordered checksums and NULL counts with the source: a SQLite demo table,
// and a PostgreSQL table of every mapped type (the server scripts/test.sh starts). They live
// apart so that only this package's test binary links DuckDB (cgo, a large static library).
package readback
