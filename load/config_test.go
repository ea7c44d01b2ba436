package load

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/errcode"
)

func TestTargetCheck(t *testing.T) {
	ok := Target{URL: "postgres://u@127.0.0.1:5432/db"}
	if err := ok.Check("orders"); err != nil {
		t.Fatal(err)
	}
	if ok.Table != "orders" || ok.Mode != ModeReplace || ok.ledgerName().Sanitize() != `"wharf_load_ledger"` {
		t.Fatalf("defaults: %+v", ok)
	}
	s := Target{URL: "postgres://u@h/db", Table: "lake.orders", Mode: ModeMerge, Key: []string{"id"}}
	if err := s.Check("orders"); err != nil || s.ledgerName().Sanitize() != `"lake"."wharf_load_ledger"` {
		t.Fatalf("schema.table: %v, ledger %s", err, s.ledgerName().Sanitize())
	}
	for _, c := range []struct {
		t    Target
		want string
	}{
		{Target{}, "load.orders.target"},
		{Target{URL: "mysql://h/db"}, `scheme "mysql"`},
		{Target{URL: "postgres://h/db", Table: "a.b.c"}, "load.orders.table"},
		{Target{URL: "postgres://h/db", Table: "x; drop"}, "load.orders.table"},
		{Target{URL: "postgres://h/db", Ledger: "1x"}, "load.orders.ledger"},
		{Target{URL: "postgres://h/db", Mode: "upsert"}, `mode "upsert"`},
		{Target{URL: "postgres://h/db", Mode: ModeMerge}, "needs the key columns"},
		{Target{URL: "postgres://h/db", Key: []string{"id"}}, "go with mode merge"},
		{Target{URL: "postgres://h/db", Mode: ModeMerge, Key: []string{"id", "id"}}, "given twice"},
		{Target{URL: "postgres://h/db", Columns: []string{"bad name"}}, "load.orders.columns"},
		{Target{URL: "postgres://h/db", Columns: []string{"at:varchar"}}, `type "varchar" is not one of`},
		{Target{URL: "postgres://h/db", Columns: []string{"a", "a:text"}}, `"a" is given twice`},
		{Target{URL: "postgres://h/db", Columns: []string{"a"}, Mode: ModeMerge, Key: []string{"id"}}, `"id" is not one of the columns`},
	} {
		err := c.t.Check("orders")
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want ErrConfig naming %q", c.t, err, c.want)
		}
		if errcode.Of(err) != ErrConfig {
			t.Errorf("%+v: code %v", c.t, errcode.Of(err))
		}
	}
}

func TestRecordColumns(t *testing.T) {
	tg := Target{Columns: []string{"host", "at: timestamptz", "n:Double  Precision"}}
	fs, err := tg.fields()
	want := []recordField{{"host", "jsonb"}, {"at", "timestamp with time zone"}, {"n", "double precision"}}
	if err != nil || !slices.Equal(fs, want) {
		t.Errorf("fields %+v (%v), want %+v", fs, err, want)
	}
}

func TestTypeTable(t *testing.T) {
	for arrowType, want := range map[string]string{
		"int64": "bigint", "decimal(12, 3)": "numeric(12,3)", "timestamp[us, tz=UTC]": "timestamp with time zone",
		jsonType: "jsonb", "extension<arrow.uuid>": "uuid",
	} {
		if got, ok := pgTypeOf(arrowType); !ok || got != want {
			t.Errorf("%s: %q %v, want %q", arrowType, got, ok, want)
		}
	}
	for _, refused := range []string{"list<item: int64, nullable>", "timestamp[ns]", "decimal256(50, 2)", "large_utf8"} {
		if got, ok := pgTypeOf(refused); ok {
			t.Errorf("%s maps to %s; want it refused", refused, got)
		}
	}
}
