package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/wharfdata/wharf/internal/bytesize"
	"github.com/wharfdata/wharf/internal/textfmt"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/transfer"
)

func (a *app) cpCommand() *cobra.Command {
	var o cpOptions
	var filter transfer.Filter
	cmd := &cobra.Command{
		Use:   "cp SRC DST",
		Short: "Copy objects and files between local disk and stores, in parallel",
		Long: `Copy one object, or with -r every object under a prefix or every file under a
directory: local to store, store to local, or store to store. Bytes are streamed, never
staged whole in memory or on disk; within one bucket the store copies them itself (over
5 GiB on S3, in parts). Many files go in parallel (-j); a large file goes as
parallel parts (--part-size), with memory bounded by the parts in flight. Every copy is
checked against the size its source announced.

SRC and DST are each one of:
  a local path     ./report.csv, /data/out/ (read and written as plain files)
  a store URL      s3://bucket/key, file:///abs/dir/key, mem://name/key
  -                standard input (as SRC) or standard output (as DST), one object only

One object (no -r): when DST ends with '/' or is an existing local directory, the copy
takes the source's base name, as with 'aws s3 cp': 'wharf cp ./a.csv s3://b/in/' writes
s3://b/in/a.csv.

With -r, SRC is a directory or a prefix and DST is one too, with or without a trailing
'/', as with 'aws s3 cp --recursive': the files below SRC keep their relative names below
DST. 'wharf cp -r ./logs s3://b/archive' writes ./logs/2024/a.gz to
s3://b/archive/2024/a.gz. s3://b/logs and s3://b/logs/ both mean everything under logs/
(never logs-old/). A source key with a wildcard (*, ?, [a-z]) copies every object below
the prefix before the wildcard that matches the rest, -r or not, keeping its name below that
prefix: 's3://b/logs/2024-*/*.gz' copies logs/2024-01/a.gz to DST/2024-01/a.gz (quote it
from the shell; * matches across '/'). --exclude and --include choose among the names below
the source, in the order given, the last match deciding, as with 'aws s3 cp'. Zero-byte
directory marker keys (ending in '/') are skipped. What
cannot be copied is passed over, each named on stderr with its code (a key that cannot be
a local file name, such as one with a '..' segment; a non-empty key ending in '/'; a
broken symbolic link; a named pipe or socket), the rest is copied, and cp exits 1 with
WHARF_COPY_INCOMPLETE.

A failure or Ctrl-C stops every copy in flight and leaves nothing half-done: no partial
object at any key, no multipart upload left open, and no partial local file (local files
are written to a temporary file beside them and renamed into place when complete). With
--if-absent no existing object or file is ever replaced: the store itself refuses
(If-None-Match), the other copies go on, and wharf exits 1 with WHARF_PRECONDITION_FAILED.
A store must be proven to enforce that condition first: wharf remembers each store's probe
verdict for a day (~/.cache/wharf/probes.json) and probes one it has none for; where the
condition is not enforced (a proxy that drops it), cp --if-absent copies nothing and exits 1
with WHARF_COORDINATION_UNPROVEN.

A file written to a local path is on the disk before it is renamed into place (fsynced;
small files share one flush of the file system per batch), so once cp exits 0 the files
survive a power loss. --no-fsync leaves them to the kernel's writeback,
as s5cmd and rclone do: faster for large downloads, and a crash of wharf still never leaves
a partial file, but a power loss in the following seconds may leave files empty or short.

--content-type, --cache-control, --content-encoding and --content-disposition set what every
object written to a store carries, each over the source's (the other headers are kept); a copy
that sets them within one bucket streams the bytes instead of copying server-side.

A recursive copy prints a line naming each file it wrote (NDJSON with --format json),
then a summary line; on a terminal a progress bar shows bytes, files, rate and ETA below
them. A local file that changes size while it is uploaded fails the copy with
WHARF_LOCAL_FILE_CHANGED (it is not retried).`,
		Example: `  wharf cp ./examples/data/orders/2024-01-01.csv s3://my-bucket/orders/
  wharf cp -r ./examples/data s3://my-bucket/data/
  wharf cp -r s3://my-bucket/data/orders ./downloads/orders
  wharf cp -r -j 64 s3://src-bucket/logs/ s3://dst-bucket/logs/
  wharf cp -r --dry-run ./site s3://my-bucket/www/
  wharf cp 's3://my-bucket/logs/2024-*/*.gz' ./logs/
  wharf cp -r --exclude '*.tmp' ./outbox s3://my-bucket/inbox/
  wharf cp --content-type application/json --cache-control no-cache ./status.json s3://my-bucket/www/
  wharf cp --if-absent ./manifest.json s3://my-bucket/exports/manifest.json
  pg_dump mydb | gzip | wharf cp - s3://my-bucket/backups/mydb.sql.gz`,
		Args: args(2, 2, "SRC and DST"),
		RunE: func(cmd *cobra.Command, argv []string) error {
			size, err := parseSize(o.partSizeText)
			if err != nil {
				return usageErr(fmt.Errorf("cp: --part-size %q: %w", o.partSizeText, err))
			}
			o.PartSize = size
			if cmd.Flags().Changed("part-size") {
				o.ReadPartSize = size // for downloads too
			}
			o.Filter = filterOf(&filter)
			return a.cp(cmd.Context(), argv[0], argv[1], o)
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&o.Recursive, "recursive", "r", false, "copy every file under a directory or every object under a prefix")
	f.IntVarP(&o.Jobs, "jobs", "j", transfer.DefaultJobs, "files copied in parallel")
	f.StringVar(&o.partSizeText, "part-size", "16MiB", "part size of large uploads, and of large downloads when given (else 64MiB); at least 5MiB for S3")
	f.BoolVar(&o.IfAbsent, "if-absent", false, "fail instead of replacing an existing destination (If-None-Match)")
	f.BoolVar(&o.DryRun, "dry-run", false, "print what would be copied, and copy nothing")
	f.BoolVar(&o.NoFsync, "no-fsync", false, "do not fsync files written to a local DST: faster, but a power loss soon after may leave them empty or short (see docs/cli.md)")
	filterFlags(f, &filter)
	attributeFlags(f, &o.Options)
	return cmd
}

// cpOptions are cp's flags: the copy's options, and the part size as given.
type cpOptions struct {
	transfer.CopyOptions
	partSizeText string
}

// cpSummary is what a recursive cp reports.
type cpSummary struct {
	Files    int     `json:"files"`
	Bytes    int64   `json:"bytes"`
	Seconds  float64 `json:"seconds"`
	MiBPerS  float64 `json:"mib_per_s"`
	FilesPer float64 `json:"files_per_s"`
	Refused  int     `json:"refused,omitempty"`
	// Verified and Unverified count the objects read from a store whose bytes were checked
	// against the CRC-32C they carry, and those that carried none.
	Verified   int `json:"verified"`
	Unverified int `json:"unverified"`
}

func (a *app) cp(ctx context.Context, srcRaw, dstRaw string, o cpOptions) error {
	p, err := a.planCopy(ctx, "cp", srcRaw, dstRaw, o)
	if err != nil {
		return err
	}
	defer p.Close()
	if o.DryRun {
		return a.reportDryRun(p)
	}
	defer a.limitMemory(p.MemoryBound())()
	bar := a.newProgress(p, o.Recursive)
	sum, err := p.Run(ctx, bar)
	bar.finish(err == nil)
	switch {
	case err != nil:
		return cpErr(err)
	case !o.Recursive:
		return a.reportOne(sum.Copied)
	}
	if err := a.reportSummary(sum); err != nil {
		return err
	}
	if p.Passed > 0 {
		return transfer.Incomplete(p.Passed, sum.Files, false)
	}
	return nil
}

// planCopy plans the copy of cp or mv (cmd names it): the stores of the flags, and the
// copy's output (what is passed over) and probe (for --if-absent) wired to the command's.
func (a *app) planCopy(ctx context.Context, cmd, srcRaw, dstRaw string, o cpOptions) (*transfer.Plan, error) {
	if o.Jobs < 1 {
		return nil, usageErr(fmt.Errorf("%s: -j %d: want at least 1", cmd, o.Jobs))
	}
	if err := checkEncryption(o.Encryption); err != nil {
		return nil, err
	}
	stores, err := a.stores()
	if err != nil {
		return nil, err
	}
	c := o.CopyOptions
	c.Stdin, c.Stdout, c.Skipped, c.ProveCreate = a.in, a.out, a.passOver, a.requireCreate
	p, err := transfer.PlanCopy(ctx, stores, srcRaw, dstRaw, c)
	if err != nil {
		return nil, cpErr(err)
	}
	return p, nil
}

// cpErr makes a copy asked for wrongly a usage error.
func cpErr(err error) error {
	var u *transfer.UsageError
	if errors.As(err, &u) {
		return usageErr(err)
	}
	return err
}

// copiedLine is how output names one file a recursive copy wrote, once it is in place: a
// line per file, as `aws s3 cp` prints, so that every destination replaced is named.
func (a *app) copiedLine(p *transfer.Plan, recursive bool) func(transfer.Task, store.ObjectInfo) []byte {
	if a.quiet || !recursive {
		return nil
	}
	return func(t transfer.Task, info store.ObjectInfo) []byte {
		src, dst := p.Names(t)
		res := transfer.Copied{Source: src, Destination: dst, Size: info.Size, ETag: info.ETag}
		if a.format == "json" {
			b, _ := json.Marshal(res)
			return append(b, '\n')
		}
		return fmt.Appendf(nil, "copied %s -> %s (%d bytes)\n", shown(res.Source), shown(res.Destination), res.Size)
	}
}

// passOver names on standard error one source a recursive copy passes over, with the code
// of the reason: `wharf: skipped WHAT: … [CODE]`, or with --format json one object
// {"skipped","error","code"}. The copy goes on, and exits 1 at the end (transfer.Incomplete).
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

// reportOne prints what a copy of one object copied (nil: its bytes were the output).
func (a *app) reportOne(res *transfer.Copied) error {
	if res == nil {
		return nil
	}
	return a.say(res, "copied %s -> %s (%d bytes)", res.Source, res.Destination, res.Size)
}

func (a *app) reportSummary(sum transfer.Summary) error {
	secs := sum.Duration.Seconds()
	s := cpSummary{Files: sum.Files, Bytes: sum.Bytes, Seconds: round3(secs), Refused: sum.Refused,
		Verified: sum.Verified, Unverified: sum.Unverified}
	if secs > 0 {
		s.MiBPerS = round3(float64(sum.Bytes) / (1 << 20) / secs)
		s.FilesPer = round3(float64(sum.Files) / secs)
	}
	unverified := ""
	if s.Unverified > 0 {
		unverified = fmt.Sprintf(" (%d read unverified: they carry no CRC-32C)", s.Unverified)
	}
	return a.say(s, "copied %d files, %s (%d bytes) in %.2fs: %.1f MiB/s, %.0f files/s%s",
		s.Files, textfmt.Size(s.Bytes), s.Bytes, secs, s.MiBPerS, s.FilesPer, unverified)
}

func round3(f float64) float64 { return math.Round(f*1000) / 1000 }

// reportDryRun prints every copy the plan would make, and copies nothing: one line each
// ({"source","destination","size","dry_run"} with --format json), then a summary line.
func (a *app) reportDryRun(p *transfer.Plan) error {
	if p.Stream() {
		src, dst := p.Names(p.Tasks[0])
		_, err := fmt.Fprintf(a.out, "would copy %s -> %s\n", src, dst)
		return err
	}
	var total int64
	for _, t := range p.Tasks {
		src, dst := p.Names(t)
		total += max(t.Size, 0)
		var err error
		if a.format == "json" {
			err = writeJSON(a.out, struct {
				Source      string `json:"source"`
				Destination string `json:"destination"`
				Size        int64  `json:"size"`
				DryRun      bool   `json:"dry_run"`
			}{src, dst, t.Size, true})
		} else {
			_, err = fmt.Fprintf(a.out, "would copy %s -> %s (%d bytes)\n", src, dst, t.Size)
		}
		if err != nil {
			return err
		}
	}
	if a.format != "json" && !a.quiet {
		if _, err := fmt.Fprintf(a.out, "dry run: would copy %d files, %s; nothing was copied\n", len(p.Tasks), textfmt.Size(total)); err != nil {
			return err
		}
	}
	if p.Passed > 0 {
		return transfer.Incomplete(p.Passed, len(p.Tasks), true)
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
