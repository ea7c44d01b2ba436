package export

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// DemoRows is the size of the demo table an export with `demo: true` creates.
const DemoRows = 1000

// PrepareDemo creates the demo SQLite source of an export marked demo: true when it is
// missing, and returns its path when it did ("" when there was nothing to make).
func PrepareDemo(ctx context.Context, e Export) (string, error) {
	rest, ok := strings.CutPrefix(e.Source, "sqlite://")
	if !e.Demo || !ok {
		return "", nil
	}
	path := filepath.FromSlash(rest)
	if _, err := os.Stat(path); err == nil {
		return "", nil
	}
	return path, CreateDemo(ctx, path, DemoRows)
}

// CreateDemo writes a small SQLite database at path for the quickstart: a table "orders"
// of rows orders with an integer key, text, a decimal, a timestamp, a boolean and NULLs. It
// refuses to replace an existing file.
func CreateDemo(ctx context.Context, path string, rows int) error {
	if _, err := os.Stat(path); err == nil {
		return newErr("demo", path, ErrConfig, fmt.Errorf("%s exists", path))
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return newErr("demo", path, ErrSourceUnavailable, err)
	}
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		return newErr("demo", path, ErrSourceUnavailable, err)
	}
	defer db.Close()
	if err := fillDemo(ctx, db, rows); err != nil {
		os.Remove(path)
		return newErr("demo", path, ErrSourceUnavailable, err)
	}
	return nil
}

func fillDemo(ctx context.Context, db *sql.DB, rows int) error {
	_, err := db.ExecContext(ctx, `CREATE TABLE orders (id INTEGER PRIMARY KEY, customer TEXT NOT NULL,
  amount DECIMAL(10,2), placed_at TIMESTAMP NOT NULL, shipped BOOLEAN, note TEXT)`)
	if err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	base := time.Date(2024, 1, 1, 9, 0, 0, 0, time.UTC)
	customers := []string{"acme", "globex", "initech", "umbrella", "hooli"}
	for i := 1; i <= rows; i++ {
		var note any
		if i%10 == 0 {
			note = fmt.Sprintf("gift wrap #%d", i)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO orders VALUES (?, ?, ?, ?, ?, ?)`, i, customers[i%len(customers)],
			fmt.Sprintf("%d.%02d", 10+i%90, i%100), base.Add(time.Duration(i)*7*time.Minute).Format("2006-01-02 15:04:05"),
			i%3 != 0, note)
		if err != nil {
			return err
		}
	}
	return tx.Commit()
}
