package export

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// sqliteValue creates a SQLite table v(id INTEGER PRIMARY KEY, v <decl>) holding one row
// (id 7, v given as a SQL literal) and returns an export of it to a fresh prefix.
func sqliteValue(t *testing.T, decl, literal string) (Export, Options) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "src.db")
	db := openDB(t, path)
	exec(t, db, `CREATE TABLE v (id INTEGER PRIMARY KEY, v `+decl+`)`)
	exec(t, db, `INSERT INTO v VALUES (7, `+literal+`)`)
	e := Export{Name: "v", Source: "sqlite://" + path, Table: "v", ChunkKey: "id",
		Destination: "file://" + t.TempDir() + "/out/"}
	return e, Options{StatePath: filepath.Join(t.TempDir(), "state.db")}
}

// TestSQLiteValuesRefusedByName: a value that would be written wrong (guessed, rounded,
// truncated, or a string a reader rejects) stops the export with ErrValueRefused naming the
// table, the column, the row's key and the value, for the reason given; nothing is certified.
func TestSQLiteValuesRefusedByName(t *testing.T) {
	for _, c := range []struct {
		name, decl, literal string
		units               map[string]TimeUnit
		reason              error
		value               string
	}{
		{"BLOB in TEXT", "TEXT", "x'deadbeef'", nil, ErrNotUTF8, "x'deadbeef'"},
		{"BLOB in untyped", "", "x'ff00'", nil, ErrNotUTF8, "x'ff00'"},
		{"BLOB in VARCHAR", "VARCHAR(10)", "x'c328'", nil, ErrNotUTF8, "x'c328'"},
		{"invalid text in TEXT", "TEXT", "CAST(x'61ff62' AS TEXT)", nil, ErrNotUTF8, "x'61ff62'"},
		{"unix millis without a unit", "TIMESTAMP", "1700000000000", nil, ErrNoTimeUnit, "1700000000000"},
		{"a real without a unit", "TIMESTAMP", "1700000000.5", nil, ErrNoTimeUnit, "1700000000.5"},
		{"2^63-1 seconds", "TIMESTAMP", "9223372036854775807", map[string]TimeUnit{"v": UnitSeconds}, ErrOutOfRange, "9223372036854775807"},
		{"2^63-1 micros is infinity to a reader", "TIMESTAMP", "9223372036854775807", map[string]TimeUnit{"v": UnitMicros}, ErrOutOfRange, "9223372036854775807"},
		{"nanoseconds finer than micros", "DATETIME", "1700000000000000001", map[string]TimeUnit{"v": UnitNanos}, ErrInexact, "1700000000000000001"},
		{"seconds finer than micros", "TIMESTAMP", "1700000000.1234567", map[string]TimeUnit{"v": UnitSeconds}, ErrInexact, "1700000000.1234567"},
		{"an offset in a naive column", "TIMESTAMP", "'2024-01-01 10:00:00+02:00'", nil, ErrBadTime, `"2024-01-01 10:00:00+02:00"`},
		{"no offset in a zoned column", "TIMESTAMPTZ", "'2024-01-01 10:00:00'", nil, ErrBadTime, `"2024-01-01 10:00:00"`},
		{"nanosecond digits", "TIMESTAMP", "'2024-01-01 10:00:00.1234567'", nil, ErrInexact, `"2024-01-01 10:00:00.1234567"`},
		{"not a timestamp", "TIMESTAMP", "'yesterday'", nil, ErrBadTime, `"yesterday"`},
		{"February 30", "DATE", "'2024-02-30'", nil, ErrBadTime, `"2024-02-30"`},
		{"a date with a time", "DATE", "'2024-01-31 12:34'", nil, ErrInexact, `"2024-01-31 12:34"`},
		{"a date as an integer", "DATE", "19700", nil, ErrNoTimeUnit, "19700"},
		{"a date with a time as seconds", "DATE", "1700000000", map[string]TimeUnit{"v": UnitSeconds}, ErrInexact, "1700000000"},
		{"a third decimal place", "DECIMAL(10,2)", "'12.345'", nil, ErrInexact, "12.345"},
		{"1e-11 at scale 10", "NUMERIC(38,10)", "1e-11", nil, ErrInexact, "1e-11"},
		{"too many integer digits", "DECIMAL(4,2)", "123.4", nil, ErrInexact, "123.4"},
		{"text in a decimal", "DECIMAL(10,2)", "'abc'", nil, ErrWrongType, `"abc"`},
		{"text in a wide decimal", "DECIMAL(50,2)", "'abc'", nil, ErrWrongType, `"abc"`},
		{"boolean 2", "BOOLEAN", "2", nil, ErrWrongType, "2"},
		{"boolean -1", "BOOLEAN", "-1", nil, ErrWrongType, "-1"},
		{"boolean 'yes'", "BOOLEAN", "'yes'", nil, ErrWrongType, `"yes"`},
		{"a real in an integer column", "INTEGER", "1.5", nil, ErrInexact, "1.5"},
		{"a BLOB in an integer column", "INTEGER", "x'01'", nil, ErrWrongType, "x'01'"},
		{"not JSON", "JSON", "'{oops'", nil, ErrBadValue, `"{oops"`},
		{"not a UUID", "UUID", "'abc'", nil, ErrWrongType, `"abc"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, o := sqliteValue(t, c.decl, c.literal)
			e.TimeUnits = c.units
			_, err := Run(context.Background(), e, o)
			var ve *ValueError
			if !errors.Is(err, ErrValueRefused) || !errors.Is(err, c.reason) || !errors.As(err, &ve) {
				t.Fatalf("err = %v, want ErrValueRefused for %v", err, c.reason)
			}
			if ve.Column != "v" || ve.Row != "7" || ve.Value != c.value {
				t.Errorf("names column %q, row %q, value %s; want v, 7, %s", ve.Column, ve.Row, ve.Value, c.value)
			}
			for _, want := range []string{`table "v"`, `column "v"`, "key 7", c.value} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("message %q lacks %q", err, want)
				}
			}
		})
	}
}

// TestSQLiteTimeUnitsNameAColumn: a time unit for a column the export does not have, or one
// that holds neither dates nor timestamps, is a configuration error, before any write.
func TestSQLiteTimeUnitsNameAColumn(t *testing.T) {
	for col, want := range map[string]string{"nope": `no column "nope"`, "id": "not a date or timestamp column"} {
		e, o := sqliteValue(t, "TIMESTAMP", "'2024-01-01'")
		e.TimeUnits = map[string]TimeUnit{col: UnitSeconds}
		_, err := Run(context.Background(), e, o)
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), want) {
			t.Errorf("time_units.%s: err = %v", col, err)
		}
	}
	e, _ := sqliteValue(t, "TIMESTAMP", "'2024-01-01'")
	e.TimeUnits = map[string]TimeUnit{"v": "fortnights"}
	if err := e.Check(); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "time_units.v") {
		t.Errorf("unknown unit: %v", err)
	}
	e.TimeUnits = map[string]TimeUnit{"v": UnitSeconds}
	e.Source = "postgres://u@127.0.0.1/db"
	if err := e.Check(); !errors.Is(err, ErrConfig) {
		t.Errorf("time_units on a postgres source: %v", err)
	}
}

func TestParseDecimalExact(t *testing.T) {
	for _, c := range []struct {
		in, out string
		fits    bool // as a decimal(10,2)
	}{
		{"12.34", "12.34", true}, {"12.345", "12.345", false}, {"12.340", "12.34", true}, {"-0.00", "0", true},
		{"1e-11", "0.00000000001", false}, {"1E2", "100", true}, {"12345678.9", "12345678.9", true},
		{"123456789", "123456789", false}, {".5", "0.5", true}, {"5.", "5", true}, {"+7", "7", true},
		{"00012.5000", "12.5", true}, {"1.5e1", "15", true},
	} {
		d, ok := parseDecimal(c.in)
		if !ok || d.String() != c.out || d.fits(10, 2) != c.fits {
			t.Errorf("%q: %q ok %v fits %v; want %q fits %v", c.in, d, ok, d.fits(10, 2), c.out, c.fits)
		}
	}
	for _, bad := range []string{"", ".", "-", "abc", "1e", "1.2.3", "1e5x", "0x10", "1 2"} {
		if _, ok := parseDecimal(bad); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestParseISO(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string // formatMicros of the instant in UTC, or "" for refused
	}{
		{"2024-01-31", "2024-01-31 00:00:00"},
		{"2024-01-31 12:34", "2024-01-31 12:34:00"},
		{"2024-01-31T12:34:56.5", "2024-01-31 12:34:56.5"},
		{"2024-01-31 12:34:56.123456Z", "2024-01-31 12:34:56.123456"},
		{"2024-01-31 12:34:56+02:00", "2024-01-31 10:34:56"},
		{"2024-01-31 12:34:56-0130", "2024-01-31 14:04:56"},
		{"2024-02-29 00:00:00", "2024-02-29 00:00:00"},
		{"2023-02-29", ""}, {"2024-13-01", ""}, {"2024-01-31 24:00", ""}, {"2024-01-31 12:60", ""},
		{"2024-1-31", ""}, {"31.01.2024", ""}, {"2024-01-31 12:34:56 UTC", ""}, {"2024-01-31 12:34:56.", ""},
		{"2024-01-31x", ""}, {"1700000000", ""},
	} {
		ti, err := parseISO(c.in)
		got := ""
		if err == nil {
			got = formatMicros(ti.micros - int64(ti.offset)*1_000_000)
		}
		if got != c.want {
			t.Errorf("%q: %q (%v), want %q", c.in, got, err, c.want)
		}
	}
}
