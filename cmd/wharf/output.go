package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/wharfdata/wharf/internal/textfmt"
	"github.com/wharfdata/wharf/store"
)

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
func lsLine(o store.ObjectInfo, name string, human bool) string {
	size := strconv.FormatInt(o.Size, 10)
	if human {
		size = textfmt.Size(o.Size)
	}
	return fmt.Sprintf("%19s %10s %s", textfmt.Time(o.LastModified), size, name)
}

// lsPrefixLine formats one common prefix of a pretty listing, as `aws s3 ls` does.
func lsPrefixLine(name string) string {
	return fmt.Sprintf("%19s %10s %s", "", "PRE", name)
}

// writeStat writes an object's metadata as aligned "field: value" lines.
func writeStat(w io.Writer, url string, o store.ObjectInfo) error {
	var b strings.Builder
	row := func(k, v string) { fmt.Fprintf(&b, "%-14s %s\n", k+":", v) }
	modified := textfmt.Time(o.LastModified)
	if !o.LastModified.IsZero() {
		modified += " UTC"
	}
	row("url", url)
	row("size", fmt.Sprintf("%d (%s)", o.Size, textfmt.Size(o.Size)))
	row("etag", textfmt.Dash(o.ETag))
	row("crc32c", textfmt.Dash(o.CRC32C))
	row("last-modified", modified)
	row("content-type", textfmt.Dash(o.ContentType))
	if o.StorageClass != "" {
		row("storage-class", o.StorageClass)
	}
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

// show writes v as JSON with --format json, else text for people (with --quiet too: what a
// command was asked to show is its output).
func (a *app) show(v any, text func(io.Writer) error) error {
	if a.format == "json" {
		return writeJSON(a.out, v)
	}
	return text(a.out)
}

// say writes v as JSON with --format json, nothing with --quiet, else one line for people.
func (a *app) say(v any, format string, args ...any) error {
	switch {
	case a.format == "json":
		return writeJSON(a.out, v)
	case a.quiet:
		return nil
	}
	_, err := fmt.Fprintf(a.out, format+"\n", args...)
	return err
}

// textOf is a report's text as show's writer.
func textOf(s func() string) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := io.WriteString(w, s())
		return err
	}
}
