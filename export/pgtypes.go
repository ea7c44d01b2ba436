package export

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/stdlib"
)

// PostgreSQL type OIDs that pgtype does not name.
const moneyOID = 790

// pgArrowType maps a PostgreSQL wire type and its modifier to Arrow. numeric(p,s) with
// p ≤ 38 and 0 ≤ s ≤ p is decimal128(p,s); any other numeric is its exact text. money is
// decimal128(19, its scale under the run's lc_monetary). Types without a mapping are their
// text, in the session's pinned formats.
func pgArrowType(oid uint32, typmod int32, moneyScale int32) (t arrow.DataType, decimalText, money bool) {
	switch oid {
	case pgtype.Int2OID:
		return arrow.PrimitiveTypes.Int16, false, false
	case pgtype.Int4OID:
		return arrow.PrimitiveTypes.Int32, false, false
	case pgtype.Int8OID, pgtype.OIDOID:
		return arrow.PrimitiveTypes.Int64, false, false
	case pgtype.Float4OID:
		return arrow.PrimitiveTypes.Float32, false, false
	case pgtype.Float8OID:
		return arrow.PrimitiveTypes.Float64, false, false
	case pgtype.NumericOID:
		if typmod >= 4 {
			p, s := (typmod-4)>>16&0xffff, (typmod-4)&0x7ff
			if (typmod-4)&0x400 != 0 {
				s = -1 // a negative scale (PostgreSQL 15): no decimal128 holds it as written
			}
			if p > 0 && p <= 38 && s >= 0 && s <= p {
				return &arrow.Decimal128Type{Precision: p, Scale: s}, false, false
			}
		}
		return arrow.BinaryTypes.String, true, false
	case moneyOID:
		return &arrow.Decimal128Type{Precision: 19, Scale: moneyScale}, false, true
	case pgtype.BoolOID:
		return arrow.FixedWidthTypes.Boolean, false, false
	case pgtype.ByteaOID:
		return arrow.BinaryTypes.Binary, false, false
	case pgtype.DateOID:
		return arrow.FixedWidthTypes.Date32, false, false
	case pgtype.TimestampOID:
		return tsNaive, false, false
	case pgtype.TimestamptzOID:
		return tsUTC, false, false
	case pgtype.UUIDOID:
		return uuidType, false, false
	case pgtype.JSONOID, pgtype.JSONBOID:
		return jsonType, false, false
	}
	return arrow.BinaryTypes.String, false, false
}

// describeQuery returns the columns of query's result: each one's name, its SQL type with
// modifiers as PostgreSQL writes it (format_type: "numeric(38,10)", "character varying(10)",
// an enum's or a composite's name; a table's column by its declared type, so a domain keeps
// its name) and its Arrow type from the wire type.
func (s *source) describeQuery(ctx context.Context, query string) ([]Column, error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	var cols []Column
	err = conn.Raw(func(dc any) error {
		pc := dc.(*stdlib.Conn).Conn()
		sd, err := pc.Prepare(ctx, "", query)
		if err != nil {
			return err
		}
		n := len(sd.Fields)
		oids, mods, rels, atts := make([]uint32, n), make([]int32, n), make([]uint32, n), make([]int16, n)
		for i, f := range sd.Fields {
			oids[i], mods[i], rels[i], atts[i] = f.DataTypeOID, f.TypeModifier, f.TableOID, int16(f.TableAttributeNumber)
		}
		names, err := pgTypeNames(ctx, pc, oids, mods, rels, atts)
		if err != nil {
			return err
		}
		for i, f := range sd.Fields {
			t, dec, money := pgArrowType(f.DataTypeOID, f.TypeModifier, s.pg.moneyScale)
			cols = append(cols, Column{Name: f.Name, DBType: names[i], Type: t, decimalText: dec, money: money, oid: f.DataTypeOID})
		}
		return nil
	})
	return cols, err
}

func pgTypeNames(ctx context.Context, pc *pgx.Conn, oids []uint32, mods []int32, rels []uint32, atts []int16) ([]string, error) {
	rows, err := pc.Query(ctx, `SELECT coalesce(format_type(a.atttypid, a.atttypmod), format_type(f.t, f.m))
FROM unnest($1::oid[], $2::int4[], $3::oid[], $4::int2[]) WITH ORDINALITY AS f(t, m, rel, att, i)
LEFT JOIN pg_attribute a ON f.rel <> 0 AND a.attrelid = f.rel AND a.attnum = f.att
ORDER BY f.i`, oids, mods, rels, atts)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// The settings every connection of a run reads with, so that no type's text depends on the
// server's, the role's or the client's defaults. lc_monetary is pinned to the value the first
// connection finds (money's scale is a property of the data), the others to fixed values.
var pgPinned = []struct{ name, value string }{
	{"DateStyle", "ISO, YMD"},
	{"IntervalStyle", "iso_8601"},
	{"TimeZone", "UTC"},
	{"extra_float_digits", "3"},
	{"client_encoding", "UTF8"},
}

// pgSession is what a run learned from and pinned in its PostgreSQL sessions.
type pgSession struct {
	mu         sync.Mutex
	pinned     bool
	monetary   string            // lc_monetary, as the first connection found it
	moneyScale int32             // digits after the point of money under it
	checkUTF8  bool              // the database is SQL_ASCII: its text may be any bytes
	settings   map[string]string // as SHOW reads them back, for the manifest
}

// afterConnect pins the session settings of a new connection.
func (p *pgSession) afterConnect(ctx context.Context, c *pgx.Conn) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.pinned {
		if err := c.QueryRow(ctx, "SHOW lc_monetary").Scan(&p.monetary); err != nil {
			return fmt.Errorf("reading lc_monetary: %w", err)
		}
	}
	var b strings.Builder
	for _, s := range pgPinned {
		fmt.Fprintf(&b, "SET %s = %s; ", s.name, quoteLiteral(s.value))
	}
	fmt.Fprintf(&b, "SET lc_monetary = %s", quoteLiteral(p.monetary))
	if _, err := c.Exec(ctx, b.String()); err != nil {
		return fmt.Errorf("pinning the session settings: %w", err)
	}
	if p.pinned {
		return nil
	}
	return p.learn(ctx, c)
}

// learn reads back what the first connection's session holds.
func (p *pgSession) learn(ctx context.Context, c *pgx.Conn) error {
	p.settings = map[string]string{}
	for _, name := range []string{"DateStyle", "IntervalStyle", "TimeZone", "extra_float_digits", "client_encoding", "lc_monetary", "server_encoding"} {
		var v string
		if err := c.QueryRow(ctx, "SELECT current_setting($1)", name).Scan(&v); err != nil {
			return fmt.Errorf("reading %s: %w", name, err)
		}
		p.settings[name] = v
	}
	if err := c.QueryRow(ctx, "SELECT scale('0'::money::numeric)").Scan(&p.moneyScale); err != nil {
		return fmt.Errorf("reading money's scale: %w", err)
	}
	p.checkUTF8 = p.settings["server_encoding"] == "SQL_ASCII"
	p.pinned = true
	return nil
}

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
