package icebird

import (
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// The canonical forms the package documentation lists, from Arrow arrays.
func TestIcebirdCanonicalForms(t *testing.T) {
	mem := memory.DefaultAllocator
	dec := array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: 18, Scale: 2})
	for _, v := range []int64{-5, 12340, 0, -123456} {
		dec.Append(decimal128.FromI64(v))
	}
	f64 := array.NewFloat64Builder(mem)
	f64.AppendValues([]float64{0.25, math.Copysign(0, -1)}, nil)
	f32 := array.NewFloat32Builder(mem)
	f32.Append(0.1)
	ts := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: arrow.Nanosecond})
	ts.AppendValues([]arrow.Timestamp{-1_500_999, 1_999}, nil)
	bin := array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
	bin.Append([]byte{0xff, 0x00})
	bin.AppendNull()
	cases := []struct {
		arr  arrow.Array
		want []string
	}{
		{dec.NewArray(), []string{"-0.05", "123.40", "0.00", "-1234.56"}},
		{f64.NewArray(), []string{"3fd0000000000000", "8000000000000000"}},
		{f32.NewArray(), []string{"3fb99999a0000000"}},
		{ts.NewArray(), []string{"-1500", "1"}},
		{bin.NewArray(), []string{"ff00", "NULL"}},
	}
	for _, c := range cases {
		for i, want := range c.want {
			got, ok, err := Canonical(c.arr, i)
			if !ok && err == nil {
				got = "NULL"
			}
			if err != nil || got != want {
				t.Errorf("%s[%d]: %q, %v; want %q", c.arr.DataType(), i, got, err, want)
			}
		}
		c.arr.Release()
	}
	list := array.NewListBuilder(mem, arrow.PrimitiveTypes.Int64)
	list.Append(true)
	if _, _, err := Canonical(list.NewArray(), 0); err == nil || !strings.Contains(err.Error(), "no canonical form") {
		t.Errorf("a list: %v", err)
	}
}

// Compare names the column whose checksum differs, and the rows only one side has.
func TestIcebirdCompare(t *testing.T) {
	one, two := "1", "2"
	want := &Result{Rows: 1, Columns: []Column{{Name: "id", NonNull: 1, Sum: Hash(one)}}, Values: [][]*string{{&one}}}
	got := &Result{Rows: 1, Columns: []Column{{Name: "id", NonNull: 1, Sum: Hash(two)}}, Values: [][]*string{{&two}}}
	if err := Compare(want, want); err != nil {
		t.Fatal(err)
	}
	err := Compare(want, got)
	for _, s := range []string{"column id:", `1 rows missing, e.g. [("1")]`, `1 rows not expected, e.g. [("2")]`} {
		if err == nil || !strings.Contains(err.Error(), s) {
			t.Errorf("Compare: %v; want it to say %s", err, s)
		}
	}
}
