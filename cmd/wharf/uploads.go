package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/wharfdata/wharf/internal/textfmt"
	"github.com/wharfdata/wharf/transfer"
)

func (a *app) uploadsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "uploads",
		Short: "List and abort incomplete uploads (open multipart uploads, uncommitted blocks)",
		Long: `An upload that was started and never finished (a process killed in the middle of a
multipart upload, a network cut before the abort) leaves its parts in the store: billed,
and invisible to 'wharf ls'. 'wharf uploads ls' lists them and 'wharf uploads abort'
discards them, under a prefix, optionally only those started more than --older-than ago.

  s3://, r2://   multipart uploads (ListMultipartUploads, AbortMultipartUpload). MinIO
                 lists them only for an exact key, or, with no prefix, those started since
                 it last started; it removes any left after 24 hours by itself.
  az://          blobs that have uncommitted blocks only (Put Block never followed by Put
                 Block List); abort deletes such a blob, never a committed one. Azure
                 discards uncommitted blocks after seven days by itself.
  gs://          not listable: a resumable upload session belongs to the client that made
                 it, and expires after a week.
  file://, mem:// no incomplete uploads: a write is a temporary file renamed whole.

'wharf ship' aborts by itself the uploads an earlier run left at the key of a file it
sends again; these commands are for everything else.

URL is a bucket and a prefix: every upload whose key starts with what follows the bucket,
byte for byte (s3://bucket/logs matches logs/a and logs-old/b), or all of the bucket's.`,
		Example: `  wharf uploads ls s3://my-bucket/
  wharf uploads ls --older-than 24h s3://my-bucket/raw/
  wharf uploads abort --dry-run s3://my-bucket/raw/
  wharf uploads abort --older-than 1h s3://my-bucket/raw/`,
		Args: args(0, 0, "a subcommand: ls or abort"),
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(a.uploadsLsCommand(), a.uploadsAbortCommand())
	return cmd
}

func (a *app) uploadsLsCommand() *cobra.Command {
	var olderThan time.Duration
	cmd := &cobra.Command{
		Use:   "ls URL",
		Short: "List the incomplete uploads under a prefix",
		Long: `List the incomplete uploads whose key starts with URL's prefix, in key order: when
each was started (UTC, by the store's clock), its age, its URL and its upload id. With
--older-than, only those started longer ago than that. A store that cannot list them
fails with WHARF_UNSUPPORTED; a bucket that does not exist with WHARF_BUCKET_MISSING.

Output: one line per upload; with --format json, one object per upload:
{"url","key","id","initiated","age_seconds"}.`,
		Example: `  wharf uploads ls s3://my-bucket/
  wharf uploads ls --older-than 24h --format json s3://my-bucket/raw/`,
		Args: args(1, 1, "one URL (a bucket and a prefix)"),
		RunE: func(cmd *cobra.Command, argv []string) error {
			return a.uploads(cmd.Context(), argv[0], olderThan, false, false)
		},
	}
	cmd.Flags().DurationVar(&olderThan, "older-than", 0, "only uploads started longer ago than this (0: all)")
	return cmd
}

func (a *app) uploadsAbortCommand() *cobra.Command {
	var olderThan time.Duration
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "abort URL",
		Short: "Abort the incomplete uploads under a prefix, discarding their parts",
		Long: `Abort every incomplete upload whose key starts with URL's prefix and that was started
longer ago than --older-than (default 24h, so that uploads under way are left alone; 0
aborts all), discarding its parts. An upload that finished or was aborted meanwhile is
not an error. Objects are never touched. --dry-run lists what would be aborted and aborts
nothing.

Output: a line per upload aborted and a summary; with --format json, one object per
upload ({"url","key","id","initiated","age_seconds"}), then {"aborted":N,"dry_run":…}.
An upload that could not be aborted is reported and the others are still tried; the
command then exits with its error.`,
		Example: `  wharf uploads abort --dry-run s3://my-bucket/raw/
  wharf uploads abort s3://my-bucket/raw/
  wharf uploads abort --older-than 0 s3://my-bucket/raw/events/file.parquet`,
		Args: args(1, 1, "one URL (a bucket and a prefix)"),
		RunE: func(cmd *cobra.Command, argv []string) error {
			return a.uploads(cmd.Context(), argv[0], olderThan, true, dryRun)
		},
	}
	cmd.Flags().DurationVar(&olderThan, "older-than", 24*time.Hour, "only uploads started longer ago than this (0: all)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print what would be aborted, and abort nothing")
	return cmd
}

// uploadsResult is abort's summary.
type uploadsResult struct {
	Aborted int  `json:"aborted"`
	DryRun  bool `json:"dry_run,omitempty"`
}

func (a *app) uploads(ctx context.Context, raw string, olderThan time.Duration, abort, dryRun bool) error {
	if olderThan < 0 {
		return usageErr(fmt.Errorf("uploads: --older-than %s: want 0 or more", olderThan))
	}
	loc, s, err := a.openList(ctx, raw)
	if err != nil {
		return err
	}
	defer s.Close()
	o := transfer.UploadsOptions{OlderThan: olderThan, Abort: abort, DryRun: dryRun, Logger: a.log}
	res, err := transfer.Uploads(ctx, s, loc, o, func(u transfer.Pending) error { return a.uploadPrint(u, abort, dryRun) })
	if err != nil {
		return err
	}
	if abort {
		if err := a.uploadsReport(uploadsResult{Aborted: res.Taken, DryRun: dryRun}); err != nil {
			return err
		}
	}
	return res.Failed
}

func (a *app) uploadPrint(l transfer.Pending, abort, dryRun bool) error {
	switch {
	case a.format == "json":
		return writeJSON(a.out, l)
	case abort && a.quiet:
		return nil
	}
	age := "-"
	if !l.Initiated.IsZero() {
		age = (time.Duration(l.Age) * time.Second).String()
	}
	verb := ""
	switch {
	case abort && dryRun:
		verb = "would abort "
	case abort:
		verb = "aborted "
	}
	_, err := fmt.Fprintf(a.out, "%s%19s %10s %s %s\n", verb, textfmt.Time(l.Initiated), age, l.URL, l.ID)
	return err
}

func (a *app) uploadsReport(r uploadsResult) error {
	return a.summary(r, r.DryRun, "dry run: would abort %d incomplete upload(s); nothing was aborted", "aborted %d incomplete upload(s)", r.Aborted)
}
