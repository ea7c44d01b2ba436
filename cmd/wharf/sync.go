package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wharfdata/wharf/internal/textfmt"
	"github.com/wharfdata/wharf/transfer"
)

func (a *app) syncCommand() *cobra.Command {
	var o syncOptions
	var filter transfer.Filter
	cmd := &cobra.Command{
		Use:   "sync SRC DST",
		Short: "Make a prefix or directory hold what another holds: copy what differs, remove only when safe",
		Long: `Copy every file or object under SRC that DST lacks or holds another version of, and
with --delete remove what is only in DST: local to store, store to local, or store to store
(-r is implied). Both ends are listed at once; the copies are cp's (the same names, ends,
parallelism and guarantees: nothing half-written, local files fsynced).

An object is copied when DST lacks it or it differs. Differs means another size, or between
two S3 stores two MD5 ETags (objects put whole) that differ; otherwise (a local file, an
object put in parts, GCS, Azure) the same size with a DST older than its source. A
difference is never decided by a modification time alone.

Every write is conditional on what was listed, so a writer changing DST meanwhile is never
overwritten unseen: a new key is a create that never replaces (If-None-Match), a changed
one a replace of the version compared (If-Match; a local file's modification time and size),
a removal a delete of the version listed. What another writer changed is left as it made
it, named on standard error, and sync exits 1 with WHARF_SYNC_CONFLICT.

--delete removes what is only in DST after every copy succeeded, and never when the source
listing failed, passed over anything, or found nothing (an empty source is refused with
WHARF_SYNC_EMPTY_SOURCE unless --allow-empty-source), nor when more would be removed than
--max-delete allows (WHARF_SYNC_DELETE_REFUSED: nothing is removed). Source and destination
must not overlap. --dry-run prints what would be copied and removed, and changes nothing.

A wildcard in the source key (s3://b/logs/*.gz), --include and --exclude choose the names
below the source that are synced, as with cp; the same names below DST are the only ones
compared or removed, so what a filter leaves out of DST stays there.`,
		Example: `  wharf sync ./examples/data s3://my-bucket/data/
  wharf sync s3://my-bucket/data/ ./mirror
  wharf sync --delete --max-delete 100 ./site s3://my-bucket/www/
  wharf sync --delete --dry-run s3://src-bucket/logs/ s3://dst-bucket/logs/
  wharf sync --delete --exclude '*.tmp' ./outbox s3://my-bucket/inbox/`,
		Args: args(2, 2, "SRC and DST"),
		RunE: func(cmd *cobra.Command, argv []string) error {
			size, err := parseSize(o.partSizeText)
			if err != nil {
				return usageErr(fmt.Errorf("sync: --part-size %q: %w", o.partSizeText, err))
			}
			o.PartSize = size
			if cmd.Flags().Changed("part-size") {
				o.ReadPartSize = size
			}
			if o.MaxDelete < -1 {
				return usageErr(fmt.Errorf("sync: --max-delete %d: want a count, or -1 for no limit", o.MaxDelete))
			}
			o.Filter = filterOf(&filter)
			return a.sync(cmd.Context(), argv[0], argv[1], o)
		},
	}
	f := cmd.Flags()
	f.IntVarP(&o.Jobs, "jobs", "j", transfer.DefaultJobs, "files copied (and removed) in parallel")
	f.StringVar(&o.partSizeText, "part-size", "16MiB", "part size of large uploads, and of large downloads when given (else 64MiB); at least 5MiB for S3")
	f.BoolVar(&o.Delete, "delete", false, "remove what is only in DST, once every copy succeeded and only when the guards allow")
	f.IntVar(&o.MaxDelete, "max-delete", -1, "with --delete, remove nothing when more than N would be removed (-1: no limit)")
	f.BoolVar(&o.AllowEmptySource, "allow-empty-source", false, "sync a source with nothing under it (with --delete, emptying DST) instead of refusing it")
	f.BoolVar(&o.DryRun, "dry-run", false, "print what would be copied and removed, and change nothing")
	f.BoolVar(&o.NoFsync, "no-fsync", false, "do not fsync files written to a local DST (see cp --no-fsync)")
	filterFlags(f, &filter)
	attributeFlags(f, &o.Options)
	return cmd
}

// syncOptions are sync's flags.
type syncOptions struct {
	transfer.SyncOptions
	partSizeText string
}

// syncSummary is what sync reports at its end.
type syncSummary struct {
	Copied     int     `json:"copied"`
	Bytes      int64   `json:"bytes"`
	Created    int     `json:"created"`
	Replaced   int     `json:"replaced"`
	Unchanged  int     `json:"unchanged"`
	Removed    int     `json:"removed"`
	OnlyInDest int     `json:"only_in_destination,omitempty"` // kept: no --delete, or a guard held
	Conflicts  int     `json:"conflicts,omitempty"`
	Verified   int     `json:"verified"`   // copies whose bytes read matched their CRC-32C
	Unverified int     `json:"unverified"` // copies from a store of objects that carry none
	Seconds    float64 `json:"seconds"`    // the whole sync: the listings, the copies, the removals
	DryRun     bool    `json:"dry_run,omitempty"`
}

func (a *app) sync(ctx context.Context, srcRaw, dstRaw string, o syncOptions) error {
	if o.Jobs < 1 {
		return usageErr(fmt.Errorf("sync: -j %d: want at least 1", o.Jobs))
	}
	if err := checkEncryption(o.Encryption); err != nil {
		return err
	}
	start := time.Now()
	stores, err := a.stores()
	if err != nil {
		return err
	}
	c := o.SyncOptions
	c.Skipped = a.passOver
	sp, err := transfer.PlanSync(ctx, stores, srcRaw, dstRaw, c)
	if err != nil {
		return cpErr(err)
	}
	defer sp.Close()
	if o.DryRun {
		return a.syncDryRun(sp)
	}
	syncTestHold(ctx, a.getenv)
	defer a.limitMemory(sp.MemoryBound())()
	bar := a.newProgress(sp.Plan, true)
	sum, err := sp.Run(ctx, bar, transfer.SyncReport{Removed: a.removedLine, Conflict: a.conflicted})
	bar.finish(err == nil)
	s := syncSummary{Copied: sum.Files, Bytes: sum.Bytes, Unchanged: sum.Unchanged, Removed: sum.Removed,
		Conflicts: sum.Conflicts, Verified: sum.Verified, Unverified: sum.Unverified,
		Seconds: round3(time.Since(start).Seconds())}
	s.Replaced = min(sp.Replaces, s.Copied)
	s.Created = s.Copied - s.Replaced
	if !o.Delete || sp.DeleteRefused != nil {
		s.OnlyInDest = sp.OnlyInDest
	}
	if rerr := a.syncReport(s); rerr != nil && err == nil {
		err = rerr
	}
	if err == nil && sp.Passed > 0 {
		err = transfer.Incomplete(sp.Passed, sum.Files, false)
	}
	return err
}

// syncReport prints the summary line.
func (a *app) syncReport(s syncSummary) error {
	text := fmt.Sprintf("synced in %.2fs: copied", s.Seconds)
	if s.DryRun {
		text = "dry run: would copy"
	}
	text += fmt.Sprintf(" %d files, %s (%d new, %d replaced), %d unchanged", s.Copied, textfmt.Size(s.Bytes), s.Created, s.Replaced, s.Unchanged)
	switch {
	case s.DryRun && s.Removed > 0:
		text += fmt.Sprintf(", would remove %d", s.Removed)
	case s.Removed > 0:
		text += fmt.Sprintf(", removed %d", s.Removed)
	}
	if s.OnlyInDest > 0 {
		text += fmt.Sprintf(", %d only in the destination (kept)", s.OnlyInDest)
	}
	if s.Conflicts > 0 {
		text += fmt.Sprintf(", %d changed by another writer (left as it made them)", s.Conflicts)
	}
	if s.DryRun {
		text += "; nothing was changed"
	}
	return a.say(s, "%s", text)
}

// syncDryRun prints every copy and removal the plan would make, and changes nothing.
func (a *app) syncDryRun(sp *transfer.SyncPlan) error {
	s := syncSummary{Copied: len(sp.Tasks), Unchanged: sp.Unchanged, Replaced: sp.Replaces, DryRun: true}
	s.Created = s.Copied - s.Replaced
	for _, t := range sp.Tasks {
		src, dst := sp.Names(t)
		s.Bytes += max(t.Size, 0)
		what := "new"
		if t.IfMatch != "" {
			what = "replace"
		}
		if err := a.dryLine(struct {
			Source      string `json:"source"`
			Destination string `json:"destination"`
			Size        int64  `json:"size"`
			Replace     bool   `json:"replace"`
			DryRun      bool   `json:"dry_run"`
		}{src, dst, t.Size, t.IfMatch != "", true}, "would copy %s -> %s (%d bytes, %s)", shown(src), shown(dst), t.Size, what); err != nil {
			return err
		}
	}
	if sp.DeleteRefused == nil {
		for _, r := range sp.Removals {
			name := sp.RemovalName(r)
			if err := a.dryLine(struct {
				Remove string `json:"remove"`
				Size   int64  `json:"size"`
				DryRun bool   `json:"dry_run"`
			}{name, r.Size, true}, "would remove %s (%d bytes)", shown(name), r.Size); err != nil {
				return err
			}
		}
		s.Removed = len(sp.Removals)
	} else {
		s.OnlyInDest = sp.OnlyInDest
	}
	if a.format != "json" {
		if err := a.syncReport(s); err != nil {
			return err
		}
	}
	switch {
	case sp.DeleteRefused != nil:
		return sp.DeleteRefused
	case sp.Passed > 0:
		return transfer.Incomplete(sp.Passed, len(sp.Tasks), true)
	}
	return nil
}

// dryLine prints one line of a dry run: v with --format json, else the text (even with -q:
// what a dry run would do is its output).
func (a *app) dryLine(v any, format string, args ...any) error {
	if a.format == "json" {
		return writeJSON(a.out, v)
	}
	_, err := fmt.Fprintf(a.out, format+"\n", args...)
	return err
}

// removedLine names one object or file sync removed.
func (a *app) removedLine(name string) {
	switch {
	case a.quiet:
	case a.format == "json":
		_ = writeJSON(a.out, struct {
			Removed string `json:"removed"`
		}{name})
	default:
		fmt.Fprintf(a.out, "removed %s\n", shown(name))
	}
}

// conflicted names on standard error a destination sync left because another writer changed it.
func (a *app) conflicted(name string, err error) {
	if a.format == "json" {
		_ = writeJSON(a.err, struct {
			Conflict string `json:"conflict"`
			Error    string `json:"error"`
			Code     string `json:"code"`
		}{name, err.Error(), errCode(err)})
		return
	}
	fmt.Fprintf(a.err, "wharf: left %s: another writer changed it: %s [%s]\n", shown(name), strings.ReplaceAll(err.Error(), "\n", " "), errCode(err))
}
