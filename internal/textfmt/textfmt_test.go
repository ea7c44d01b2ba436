package textfmt

import (
	"bytes"
	"testing"
	"time"
)

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB", 5 << 30: "5.0 GiB", 3 << 60: "3.0 EiB"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestTimeIsUTCAndZeroIsADash(t *testing.T) {
	at := time.Date(2024, 1, 2, 3, 4, 5, 600, time.FixedZone("x", 3600))
	if got, want := Time(at), "2024-01-02 02:04:05"; got != want {
		t.Errorf("Time = %q, want %q", got, want)
	}
	if got := Time(time.Time{}); got != "-" {
		t.Errorf("Time(zero) = %q, want -", got)
	}
}

func TestRowsAlignTheirValues(t *testing.T) {
	r := Rows{Width: 8}
	r.Row("a", "%d", 1)
	r.Row("longer", "%s", Dash(""))
	r.Row("evidence", "%s", OneLine("two\n  lines"))
	var b bytes.Buffer
	if _, err := r.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	if want := "a:       1\nlonger:  -\nevidence: two lines\n"; b.String() != want {
		t.Errorf("rows = %q, want %q", b.String(), want)
	}
}
