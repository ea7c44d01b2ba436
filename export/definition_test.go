package export

import (
	"slices"
	"testing"
	"time"
)

// TestDefinitionNamesWhatDecidesTheRows changes each option of a checked export: those that
// decide its rows or bytes change the fingerprint and are named alone; the others (and a
// password, which must never reach the journal) leave it as it was.
func TestDefinitionNamesWhatDecidesTheRows(t *testing.T) {
	base := func() Export {
		return Export{Name: "orders", Source: "sqlite:///src.db", Table: "orders", ChunkKey: "id",
			Destination: "./out/", TimeUnits: map[string]TimeUnit{"at": "unix_seconds", "day": "unix_days"}}
	}
	check := func(e Export) Definition {
		t.Helper()
		if err := e.Check(); err != nil {
			t.Fatal(err)
		}
		return definitionOf(&e)
	}
	was := check(base())
	wait := time.Second
	for field, edit := range map[string]func(*Export){
		"source":       func(e *Export) { e.Source = "sqlite:///other.db" },
		"table":        func(e *Export) { e.Table = "archive" },
		"query":        func(e *Export) { e.Table, e.Query = "", "SELECT * FROM orders" },
		"chunk_key":    func(e *Export) { e.ChunkKey = "rev" },
		"mode":         func(e *Export) { e.Mode, e.CursorColumn = ModeDelta, "id" },
		"format":       func(e *Export) { e.Format = FormatCSV },
		"invalid_utf8": func(e *Export) { e.InvalidUTF8 = UTF8Binary },
		"time_units":   func(e *Export) { e.TimeUnits["at"] = "unix_millis" },
		"infinity":     func(e *Export) { e.Infinity = InfinityClamp },
		"":             func(e *Export) { e.ChunkRows, e.Destination, e.Password = 7, "./elsewhere/", "env://PW" },
		"(read options)": func(e *Export) {
			e.Consistency, e.DeltaWait, e.Superseded, e.Validate = ConsistencyChunk, &wait, SupersededMove, true
		},
	} {
		e := base()
		edit(&e)
		d := check(e)
		got := d.changed(&was)
		want := []string{field}
		if field == "" || field == "(read options)" {
			want = nil
		}
		if field == "query" {
			want = []string{"query", "table"}
		}
		if field == "mode" {
			want = []string{"cursor_column", "mode"}
		}
		if !slices.Equal(got, want) || (d.Fingerprint == was.Fingerprint) != (want == nil) {
			t.Errorf("%s: changed %v (fingerprint %s, was %s), want %v", field, got, d.Fingerprint, was.Fingerprint, want)
		}
	}
	if got := was.changed(nil); len(got) != len(was.Fields) {
		t.Errorf("against no journaled definition %v changed, want every field", got)
	}
}
