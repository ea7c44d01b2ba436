package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/wharfdata/wharf/store"
)

// timeLayout is how pretty output shows times: UTC, to the second, like `aws s3 ls` but
// unambiguous about the zone.
const timeLayout = "2006-01-02 15:04:05"

// writeJSON writes v as one line of JSON.
func writeJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// lsPrefix is a common prefix in `ls --format json` output.
type lsPrefix struct {
	Prefix string `json:"prefix"`
}

// lsLine formats one object of a pretty listing: last-modified (UTC), size, name.
func lsLine(o store.ObjectInfo, name string) string {
	return fmt.Sprintf("%19s %10d %s", formatTime(o.LastModified), o.Size, name)
}

// lsPrefixLine formats one common prefix of a pretty listing, as `aws s3 ls` does.
func lsPrefixLine(name string) string {
	return fmt.Sprintf("%19s %10s %s", "", "PRE", name)
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(timeLayout)
}

// humanSize formats n bytes in binary units: "0 B", "1.5 KiB", "2.0 GiB".
func humanSize(n int64) string {
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

// writeStat writes an object's metadata as aligned "field: value" lines.
func writeStat(w io.Writer, url string, o store.ObjectInfo) error {
	var b strings.Builder
	row := func(k, v string) { fmt.Fprintf(&b, "%-14s %s\n", k+":", v) }
	modified := formatTime(o.LastModified)
	if !o.LastModified.IsZero() {
		modified += " UTC"
	}
	row("url", url)
	row("size", fmt.Sprintf("%d (%s)", o.Size, humanSize(o.Size)))
	row("etag", orDash(o.ETag))
	row("last-modified", modified)
	row("content-type", orDash(o.ContentType))
	writeHeaders(&b, o.Headers)
	writeMetadata(&b, o.Metadata)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeHeaders writes the standard headers the object carries, one a line, in the form they
// take on the wire.
func writeHeaders(b *strings.Builder, h store.Headers) {
	if h.IsZero() {
		fmt.Fprintf(b, "%-14s %s\n", "headers:", "-")
		return
	}
	fmt.Fprintf(b, "headers:\n")
	for _, kv := range [][2]string{
		{"Cache-Control", h.CacheControl}, {"Content-Disposition", h.ContentDisposition},
		{"Content-Encoding", h.ContentEncoding}, {"Content-Language", h.ContentLanguage},
	} {
		if kv[1] != "" {
			fmt.Fprintf(b, "  %s: %s\n", kv[0], kv[1])
		}
	}
}

func writeMetadata(b *strings.Builder, md map[string]string) {
	if len(md) == 0 {
		fmt.Fprintf(b, "%-14s %s\n", "metadata:", "-")
		return
	}
	fmt.Fprintf(b, "metadata:\n")
	for _, k := range slices.Sorted(maps.Keys(md)) {
		fmt.Fprintf(b, "  %s: %s\n", k, md[k])
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
