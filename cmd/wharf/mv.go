package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wharfdata/wharf/transfer"
)

func (a *app) mvCommand() *cobra.Command {
	var o cpOptions
	var filter transfer.Filter
	cmd := &cobra.Command{
		Use:   "mv SRC DST",
		Short: "Move objects and files: copy, then remove each source that is still what was copied",
		Long: `Move one object or file, or with -r everything under a prefix or directory: cp's copy
(the same names, ends, parallelism and guarantees), then the removal of each source.

A source is removed only once every copy succeeded (a failed or interrupted move removes
nothing, so running it again finds every source), and only while it is still the version
that was copied: an object keeps the ETag it was listed with (read again, and sent as the
delete's If-Match where the store enforces it), a local file its size. A source another
writer replaced or removed after its copy is kept, named on standard error, and mv exits 1
with WHARF_MOVE_SOURCE_KEPT; the destination holds the version that was copied.

A move whose source and destination are the same object, or a prefix or directory inside
the other, is refused before anything is copied. Standard input and output cannot be moved.
--dry-run prints the copies a move would make and changes nothing. A wildcard in the source
key, --include and --exclude choose what is moved, as with cp.`,
		Example: `  wharf mv ./examples/data/orders/2024-01-01.csv s3://my-bucket/orders/
  wharf mv -r s3://my-bucket/incoming/ s3://my-bucket/archive/2024/
  wharf mv -r --dry-run ./outbox s3://my-bucket/inbox/`,
		Args: args(2, 2, "SRC and DST"),
		RunE: func(cmd *cobra.Command, argv []string) error {
			o.Filter = filterOf(&filter)
			return a.mv(cmd.Context(), argv[0], argv[1], o)
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&o.Recursive, "recursive", "r", false, "move every file under a directory or every object under a prefix")
	f.IntVarP(&o.Jobs, "jobs", "j", transfer.DefaultJobs, "files copied in parallel")
	f.BoolVar(&o.IfAbsent, "if-absent", false, "fail instead of replacing an existing destination (If-None-Match)")
	f.BoolVar(&o.DryRun, "dry-run", false, "print what would be moved, and change nothing")
	filterFlags(f, &filter)
	return cmd
}

// mvSummary is what a recursive mv reports after cp's summary.
type mvSummary struct {
	Removed int `json:"removed"`
	Kept    int `json:"kept,omitempty"`
}

func (a *app) mv(ctx context.Context, srcRaw, dstRaw string, o cpOptions) error {
	p, err := a.planCopy(ctx, "mv", srcRaw, dstRaw, o)
	if err != nil {
		return err
	}
	defer p.Close()
	if err := p.CheckMove(); err != nil {
		return cpErr(err)
	}
	if o.DryRun {
		return a.reportDryRun(p)
	}
	defer a.limitMemory(p.MemoryBound())()
	bar := a.newProgress(p, o.Recursive)
	sum, err := p.Move(ctx, bar, transfer.Move{Kept: a.keptSource})
	bar.finish(err == nil)
	switch {
	case err != nil && sum.Removed+sum.Kept == 0:
		return cpErr(err)
	case !o.Recursive && err == nil:
		res := sum.Copied
		return a.say(res, "moved %s -> %s (%d bytes)", res.Source, res.Destination, res.Size)
	}
	if err := a.reportSummary(sum.Summary); err != nil {
		return err
	}
	if err := a.say(mvSummary{Removed: sum.Removed, Kept: sum.Kept}, "removed %d source(s), kept %d", sum.Removed, sum.Kept); err != nil {
		return err
	}
	if err != nil {
		return err // the sources kept, each named above, or a removal that failed
	}
	if p.Passed > 0 {
		return transfer.Incomplete(p.Passed, sum.Files, false)
	}
	return nil
}

// keptSource names on standard error a source mv copied but kept, with its code.
func (a *app) keptSource(name string, err error) {
	if a.format == "json" {
		_ = writeJSON(a.err, struct {
			Kept  string `json:"kept"`
			Error string `json:"error"`
			Code  string `json:"code"`
		}{name, err.Error(), errCode(err)})
		return
	}
	fmt.Fprintf(a.err, "wharf: kept %s: %s [%s]\n", shown(name), strings.ReplaceAll(err.Error(), "\n", " "), errCode(err))
}
