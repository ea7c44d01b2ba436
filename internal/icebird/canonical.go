package icebird

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// FromArrow is the Result the rows of tbl (in its column order) give: what Read returns for
// a table that holds exactly these rows, with every value in Values.
func FromArrow(tbl arrow.Table) (*Result, error) {
	r := &Result{Columns: make([]Column, tbl.NumCols())}
	for i := range r.Columns {
		r.Columns[i].Name = tbl.Schema().Field(i).Name
	}
	rdr := array.NewTableReader(tbl, 0)
	defer rdr.Release()
	for rdr.Next() {
		if err := r.add(rdr.RecordBatch()); err != nil {
			return nil, err
		}
	}
	return r, rdr.Err()
}

// add adds rec's rows.
func (r *Result) add(rec arrow.RecordBatch) error {
	for row := range int(rec.NumRows()) {
		vals := make([]*string, rec.NumCols())
		for c, col := range rec.Columns() {
			s, ok, err := Canonical(col, row)
			if err != nil {
				return fmt.Errorf("icebird: column %s: %w", r.Columns[c].Name, err)
			}
			if !ok {
				continue
			}
			vals[c] = &s
			r.Columns[c].NonNull++
			r.Columns[c].Sum += Hash(s)
		}
		r.Values = append(r.Values, vals)
		r.Rows++
	}
	return nil
}

// Hash is a canonical value's hash: the first 8 bytes of the SHA-256 of its UTF-8 text, as a
// big-endian number.
func Hash(canonical string) uint64 {
	h := sha256.Sum256([]byte(canonical))
	return binary.BigEndian.Uint64(h[:8])
}

// Canonical is the canonical text of arr's value at i (see the package documentation), and
// false when it is null.
func Canonical(arr arrow.Array, i int) (string, bool, error) {
	if arr.IsNull(i) {
		return "", false, nil
	}
	switch a := arr.(type) {
	case *array.Boolean:
		return strconv.FormatBool(a.Value(i)), true, nil
	case *array.Int8:
		return strconv.FormatInt(int64(a.Value(i)), 10), true, nil
	case *array.Int16:
		return strconv.FormatInt(int64(a.Value(i)), 10), true, nil
	case *array.Int32:
		return strconv.FormatInt(int64(a.Value(i)), 10), true, nil
	case *array.Int64:
		return strconv.FormatInt(a.Value(i), 10), true, nil
	case *array.Float32:
		return floatBits(float64(a.Value(i))), true, nil
	case *array.Float64:
		return floatBits(a.Value(i)), true, nil
	case *array.String:
		return a.Value(i), true, nil
	case *array.LargeString:
		return a.Value(i), true, nil
	case *array.Binary:
		return hex.EncodeToString(a.Value(i)), true, nil
	case *array.LargeBinary:
		return hex.EncodeToString(a.Value(i)), true, nil
	case *array.FixedSizeBinary:
		return hex.EncodeToString(a.Value(i)), true, nil
	case *array.Date32:
		return strconv.FormatInt(int64(a.Value(i)), 10), true, nil
	case *array.Time64:
		return micros(int64(a.Value(i)), a.DataType().(*arrow.Time64Type).Unit)
	case *array.Timestamp:
		return micros(int64(a.Value(i)), a.DataType().(*arrow.TimestampType).Unit)
	case *array.Decimal128:
		return decimal(a.Value(i), a.DataType().(*arrow.Decimal128Type).Scale), true, nil
	}
	return "", false, fmt.Errorf("the Arrow type %s has no canonical form", arr.DataType())
}

// floatBits is the 16 lowercase hex digits of v's IEEE 754 binary64 bits.
func floatBits(v float64) string { return fmt.Sprintf("%016x", math.Float64bits(v)) }

// micros is v, in unit, as a decimal count of microseconds (truncated toward zero from
// nanoseconds).
func micros(v int64, unit arrow.TimeUnit) (string, bool, error) {
	switch unit {
	case arrow.Second:
		v *= 1e6
	case arrow.Millisecond:
		v *= 1e3
	case arrow.Nanosecond:
		v /= 1e3
	}
	return strconv.FormatInt(v, 10), true, nil
}

// decimal is the unscaled v with a point before its last scale digits: "-0.05", "12.30".
func decimal(v decimal128.Num, scale int32) string {
	b := v.BigInt()
	neg := b.Sign() < 0
	digits := new(big.Int).Abs(b).String()
	if scale <= 0 {
		return b.String()
	}
	if pad := int(scale) + 1 - len(digits); pad > 0 {
		digits = strings.Repeat("0", pad) + digits
	}
	s := digits[:len(digits)-int(scale)] + "." + digits[len(digits)-int(scale):]
	if neg {
		s = "-" + s
	}
	return s
}

// Compare returns an error naming every difference between what was read (got) and what
// was expected (want): the row count, the column names, each column's non-null count and
// checksum, and, when both have Values, the rows (as multisets: the order is free). nil
// when they agree.
func Compare(want, got *Result) error {
	var errs []error
	if got.Rows != want.Rows {
		errs = append(errs, fmt.Errorf("%d rows, want %d", got.Rows, want.Rows))
	}
	if !slices.Equal(names(got.Columns), names(want.Columns)) {
		errs = append(errs, fmt.Errorf("columns %v, want %v", names(got.Columns), names(want.Columns)))
	} else {
		for i, w := range want.Columns {
			g := got.Columns[i]
			if g.NonNull != w.NonNull || g.Sum != w.Sum {
				errs = append(errs, fmt.Errorf("column %s: %d non-null values with checksum %016x, want %d with %016x",
					w.Name, g.NonNull, g.Sum, w.NonNull, w.Sum))
			}
		}
	}
	if got.Values != nil && want.Values != nil {
		errs = append(errs, compareRows(want.Values, got.Values)...)
	}
	return errors.Join(errs...)
}

func names(cols []Column) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Name
	}
	return out
}

// compareRows names the rows only one side has (at most three each way).
func compareRows(want, got [][]*string) []error {
	count := map[string]int{}
	for _, r := range want {
		count[rowText(r)]++
	}
	for _, r := range got {
		count[rowText(r)]--
	}
	var extra, missing []string
	for r, n := range count {
		for ; n > 0; n-- {
			missing = append(missing, r)
		}
		for ; n < 0; n++ {
			extra = append(extra, r)
		}
	}
	slices.Sort(extra)
	slices.Sort(missing)
	var errs []error
	if len(missing) > 0 {
		errs = append(errs, fmt.Errorf("%d rows missing, e.g. %v", len(missing), missing[:min(3, len(missing))]))
	}
	if len(extra) > 0 {
		errs = append(errs, fmt.Errorf("%d rows not expected, e.g. %v", len(extra), extra[:min(3, len(extra))]))
	}
	return errs
}

// rowText is a row as one string: its values quoted, null as NULL.
func rowText(r []*string) string {
	parts := make([]string, len(r))
	for i, v := range r {
		if v == nil {
			parts[i] = "NULL"
		} else {
			parts[i] = strconv.Quote(*v)
		}
	}
	return "(" + strings.Join(parts, ", ") + ")"
}
