package textfmt

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// TimeLayout is how a report shows a time: UTC, to the second, like `aws s3 ls` but
// unambiguous about the zone.
const TimeLayout = "2006-01-02 15:04:05"

// Time formats t in UTC with TimeLayout; the zero time is "-".
func Time(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(TimeLayout)
}

// Size formats n bytes in binary units: "0 B", "1023 B", "1.5 KiB", "2.0 GiB".
func Size(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	f, units := float64(n), []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	var u string
	for _, u = range units {
		f /= 1024
		if f < 1024 {
			break
		}
	}
	return fmt.Sprintf("%.1f %s", f, u)
}

// Dash is s, or "-" when s is empty.
func Dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// OneLine folds s's runs of white space, newlines included, into single spaces.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// YesNo is "yes" or "no".
func YesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "no"
}

// Rows builds a block of "field: value" lines whose values start in one column: the field
// and its colon padded to Width.
type Rows struct {
	strings.Builder
	Width int
}

// Row adds one line: field, a colon, and the value format and args make.
func (r *Rows) Row(field, format string, args ...any) {
	fmt.Fprintf(&r.Builder, "%-*s %s\n", r.Width, field+":", fmt.Sprintf(format, args...))
}

// WriteTo writes the rows built so far to w.
func (r *Rows) WriteTo(w io.Writer) (int64, error) {
	n, err := io.WriteString(w, r.String())
	return int64(n), err
}
