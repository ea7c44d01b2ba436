package load

import (
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/jackc/pgx/v5/pgtype"

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

// TestValues reads each kind of column as pgx is given it, NULLs included.
func TestValues(t *testing.T) {
	mem := memory.NewGoAllocator()
	ib := array.NewInt64Builder(mem)
	ib.AppendValues([]int64{7}, nil)
	ib.AppendNull()
	ints := ib.NewArray()
	db := array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: 12, Scale: 3})
	db.Append(decimal128.FromI64(-1125))
	dec := db.NewArray()
	ub := extensions.NewUUIDBuilder(mem)
	ub.AppendBytes([16]byte{1, 2, 3})
	uuids := ub.NewArray()
	tb := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"})
	tb.Append(arrow.Timestamp(1_700_000_000_000_001))
	ts := tb.NewArray()

	v, err := valuesOf(ints, "int64")
	if err != nil || v(0) != int64(7) || v(1) != nil {
		t.Fatalf("int64: %v %v %v", err, v(0), v(1))
	}
	v, err = valuesOf(dec, "decimal(12, 3)")
	if n, ok := v(0).(pgtype.Numeric); err != nil || !ok || n.Int.Int64() != -1125 || n.Exp != -3 {
		t.Fatalf("decimal: %v %#v", err, v(0))
	}
	v, err = valuesOf(uuids, "extension<arrow.uuid>")
	if u, ok := v(0).(pgtype.UUID); err != nil || !ok || u.Bytes[2] != 3 {
		t.Fatalf("uuid: %v %#v", err, v(0))
	}
	v, err = valuesOf(ts, "timestamp[us, tz=UTC]")
	if tz, ok := v(0).(pgtype.Timestamptz); err != nil || !ok || tz.Time.UnixMicro() != 1_700_000_000_000_001 {
		t.Fatalf("timestamptz: %v %#v", err, v(0))
	}
	if _, err := valuesOf(ints, "int32"); err == nil || !strings.Contains(err.Error(), "the part's column is int64") {
		t.Fatalf("a column of another type: %v", err)
	}
}
