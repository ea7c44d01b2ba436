package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"strconv"
	"strings"
	"unicode"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/internal/bytesize"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/transfer"
)

// cpSummary is what a recursive cp reports.
type cpSummary struct {
	Files    int     `json:"files"`
	Bytes    int64   `json:"bytes"`
	Seconds  float64 `json:"seconds"`
	MiBPerS  float64 `json:"mib_per_s"`
	FilesPer float64 `json:"files_per_s"`
	Refused  int     `json:"refused,omitempty"`
}

// defaultReadPartSize is the part size of parallel downloads to local disk unless --part-size
// is given: a download part buffers nothing, and with many files in flight fewer, longer
// ranged GETs cost the server less (64 MiB files downloaded ~20 % faster from MinIO than as
// 16 MiB parts; see bench/README.md).
const defaultReadPartSize = 64 << 20

// runPlan copies what p lists and reports it.
func (a *app) runPlan(ctx context.Context, p *cpPlan, o cpOptions) error {
	opts := transfer.Options{Jobs: o.jobs, PartSize: o.partSize, IfAbsent: o.ifAbsent}
	if !o.partSizeSet {
		opts.ReadPartSize = defaultReadPartSize
	}
	if p.src.st != nil && p.dst.st != nil && sameStore(p.src.loc, p.dst.loc) {
		opts.ServerSide = p.dst.st
	}
	// Part buffers are pooled and reused, so the heap is mostly live buffers: a low GC target
	// keeps peak memory near parts in flight × part size without costing a collection per part.
	// A download to local disk holds no part buffer, and its small live heap would collect
	// every few requests at that target: it gets the default one, under the same limit.
	gc := 25
	if p.dst.local != nil {
		gc = 100
	}
	defer debug.SetGCPercent(debug.SetGCPercent(gc))
	defer a.limitMemory(transfer.MemoryBound(o.jobs, len(p.tasks), o.partSize))()
	bar := a.newProgress(p)
	opts.Progress = bar
	sum, err := transfer.Run(ctx, sourceOf(p.src), destOf(p.dst), p.tasks, opts)
	bar.finish(err == nil)
	if err == nil && p.dst.local != nil {
		err = p.dst.local.Sync()
	}
	if err != nil {
		return a.cpError(p, err)
	}
	if p.single {
		return a.reportOne(p, sum)
	}
	if err := a.reportSummary(sum); err != nil {
		return err
	}
	if p.passed > 0 {
		return incompleteErr(p.passed, sum.Files, false)
	}
	return nil
}

// copiedLine is how output names one file a recursive copy wrote, once it is in place: a
// line per file, as `aws s3 cp` prints, so that every destination replaced is named.
func (a *app) copiedLine(p *cpPlan) func(transfer.Task, store.ObjectInfo) []byte {
	if a.quiet || p.single {
		return nil
	}
	return func(t transfer.Task, info store.ObjectInfo) []byte {
		res := cpResult{Source: p.src.url(t.Src), Destination: p.dst.url(t.Dst), Size: info.Size, ETag: info.ETag}
		if a.format == "json" {
			b, _ := json.Marshal(res)
			return append(b, '\n')
		}
		return fmt.Appendf(nil, "copied %s -> %s (%d bytes)\n", shown(res.Source), shown(res.Destination), res.Size)
	}
}

// passOver names on standard error one source a recursive copy passes over, with the code
// of the reason: `wharf: skipped WHAT: … [CODE]`, or with --format json one object
// {"skipped","error","code"}. The copy goes on, and exits 1 at the end (incompleteErr).
func (a *app) passOver(what string, err error) {
	msg, code := err.Error(), errCode(err)
	if a.format == "json" {
		_ = writeJSON(a.err, struct {
			Skipped string `json:"skipped"`
			Error   string `json:"error"`
			Code    string `json:"code"`
		}{what, msg, code})
		return
	}
	fmt.Fprintf(a.err, "wharf: skipped %s: %s [%s]\n", shown(what), strings.ReplaceAll(msg, "\n", " "), code)
}

// incompleteErr is the error of a recursive copy that passed over n sources (each named as it
// was found) and copied the rest.
func incompleteErr(n, copied int, dryRun bool) error {
	done := "copied"
	if dryRun {
		done = "would be copied"
	}
	return errcode.E("cp", "", transfer.ErrIncomplete,
		fmt.Errorf("%d passed over (each named above), %d %s", n, copied, done))
}

// shown is how pretty output names a path or URL: as it is, or quoted when it holds a byte a
// terminal would not print (a key with a tab or a newline), so that one name is one line and
// never a terminal escape.
func shown(s string) string {
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

func sourceOf(s *side) transfer.Source {
	if s.local != nil {
		return s.local
	}
	return s.st
}

func destOf(s *side) transfer.Dest {
	if s.local != nil {
		return s.local
	}
	return s.st
}

// cpError names the URL a failure happened at: store errors name only their key.
func (a *app) cpError(p *cpPlan, err error) error {
	var se *store.Error
	if store.IsContext(err) || !errors.As(err, &se) {
		return err
	}
	switch {
	case se.Op == "put" && p.dst.st != nil:
		return fmt.Errorf("%s: %w", p.dst.url(se.Key), err)
	case (se.Op == "get" || se.Op == "head") && p.src.st != nil:
		return fmt.Errorf("%s: %w", p.src.url(se.Key), err)
	}
	return err
}

func (a *app) reportOne(p *cpPlan, sum transfer.Summary) error {
	t := p.tasks[0]
	res := cpResult{Source: p.src.url(t.Src), Destination: p.dst.url(t.Dst), Size: sum.Bytes}
	if p.src.local != nil {
		res.Source = p.src.raw
	}
	switch {
	case a.format == "json":
		return writeJSON(a.out, res)
	case a.quiet:
		return nil
	}
	_, err := fmt.Fprintf(a.out, "copied %s -> %s (%d bytes)\n", res.Source, res.Destination, res.Size)
	return err
}

func (a *app) reportSummary(sum transfer.Summary) error {
	secs := sum.Duration.Seconds()
	s := cpSummary{Files: sum.Files, Bytes: sum.Bytes, Seconds: round3(secs), Refused: sum.Refused}
	if secs > 0 {
		s.MiBPerS = round3(float64(sum.Bytes) / (1 << 20) / secs)
		s.FilesPer = round3(float64(sum.Files) / secs)
	}
	switch {
	case a.format == "json":
		return writeJSON(a.out, s)
	case a.quiet:
		return nil
	}
	_, err := fmt.Fprintf(a.out, "copied %d files, %s (%d bytes) in %.2fs: %.1f MiB/s, %.0f files/s\n",
		s.Files, humanSize(s.Bytes), s.Bytes, secs, s.MiBPerS, s.FilesPer)
	return err
}

func round3(f float64) float64 { return math.Round(f*1000) / 1000 }

// dryRunLine is one line of `cp --dry-run --format json`.
type dryRunLine struct {
	Source      string `json:"source"`
	Destination string `json:"destination"`
	Size        int64  `json:"size"`
	DryRun      bool   `json:"dry_run"`
}

// reportDryRun prints every copy the plan would make, and copies nothing.
func (a *app) reportDryRun(p *cpPlan) error {
	var total int64
	for _, t := range p.tasks {
		l := dryRunLine{Source: p.src.url(t.Src), Destination: p.dst.url(t.Dst), Size: t.Size, DryRun: true}
		total += max(t.Size, 0)
		var err error
		if a.format == "json" {
			err = writeJSON(a.out, l)
		} else {
			_, err = fmt.Fprintf(a.out, "would copy %s -> %s (%d bytes)\n", l.Source, l.Destination, l.Size)
		}
		if err != nil {
			return err
		}
	}
	if a.format != "json" && !a.quiet {
		if _, err := fmt.Fprintf(a.out, "dry run: would copy %d files, %s; nothing was copied\n", len(p.tasks), humanSize(total)); err != nil {
			return err
		}
	}
	if p.passed > 0 {
		return incompleteErr(p.passed, len(p.tasks), true)
	}
	return nil
}

// parseSize reads --part-size: a byte size as the config file writes one (bytesize: "16MiB",
// "64M", "5MB" read as binary units, or a number of bytes), at most 5 GiB.
func parseSize(s string) (int64, error) {
	n, err := bytesize.Parse(s)
	switch {
	case err != nil:
		return 0, err
	case n <= 0 || n > 5<<30:
		return 0, errors.New("want a size such as 16MiB, at most 5GiB")
	}
	return n, nil
}
