package export

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

func TestCSVRecords(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want [][]string
		bad  bool
	}{
		{in: "a,b\n1,\n", want: [][]string{{"a", "b"}, {"1", ""}}},
		{in: "a\n\n\"\"\nx\n", want: [][]string{{"a"}, {""}, {""}, {"x"}}}, // a single column's NULL is an empty line
		{in: "a,b\r\n\"say \"\"hi\"\"\",\"x,\ny\"\r\n", want: [][]string{{"a", "b"}, {`say "hi"`, "x,\ny"}}},
		{in: "a,b\n1,2", want: [][]string{{"a", "b"}, {"1", "2"}}},
		{in: "a\n x\r\n", want: [][]string{{"a"}, {" x"}}},
		{in: "a\n\"x\"y\n", want: [][]string{{"a"}}, bad: true},
		{in: "a\n\"x\n", want: [][]string{{"a"}}, bad: true},
	} {
		c := newCSVRecords(strings.NewReader(tc.in))
		var got [][]string
		var err error
		for {
			var rec []string
			if rec, err = c.next(); err != nil {
				break
			}
			got = append(got, append([]string(nil), rec...))
		}
		if bad := !errors.Is(err, io.EOF); bad != tc.bad {
			t.Errorf("%q: error %v, want bad=%v", tc.in, err, tc.bad)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: records %q, want %q", tc.in, got, tc.want)
		}
	}
}
