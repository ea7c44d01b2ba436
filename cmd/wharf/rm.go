package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/transfer"
)

func (a *app) rmCommand() *cobra.Command {
	var recursive, dryRun bool
	var filter transfer.Filter
	cmd := &cobra.Command{
		Use:   "rm URL",
		Short: "Remove one object, or with -r every object under a prefix",
		Long: `Remove one object, or with -r every object under a prefix or directory.

Without -r the URL names one object; removing one that does not exist is an error
(WHARF_NOT_FOUND), so a typo never passes silently. With -r, s3://b/logs and
s3://b/logs/ both mean every key under logs/ (never logs-old/); keys are deleted in
batches of up to 1,000 where the store has batch deletes (S3 DeleteObjects), else one at
a time. A prefix with nothing under it is WHARF_NOT_FOUND. A bucket that does not exist is
WHARF_BUCKET_MISSING. --dry-run lists what would be removed and removes nothing.

Output: each key as it is removed ("removed URL", or "would remove URL" with --dry-run),
printed only once the store has confirmed its batch, then one summary line. With
--format json, NDJSON: {"key":URL} for each key, then {"removed":N,"dry_run":…}.
--quiet prints only a dry run's keys.

A key with a wildcard (*, ?, [a-z]; * matches across '/') removes every object below the
prefix before the wildcard whose name below it matches the rest, -r or not:
'wharf rm "s3://b/tmp/*.csv"' removes tmp/a.csv and tmp/x/b.csv. --exclude and --include
choose among the names below the prefix, in the order given, the last match deciding.`,
		Example: `  wharf rm s3://my-bucket/tmp/scratch.csv
  wharf rm -r --dry-run s3://my-bucket/tmp/
  wharf rm -r s3://my-bucket/tmp/
  wharf rm 's3://my-bucket/tmp/*.csv'
  wharf rm -r --exclude '*.keep' s3://my-bucket/tmp/`,
		Args: args(1, 1, "one URL"),
		RunE: func(cmd *cobra.Command, argv []string) error {
			f := filterOf(&filter)
			switch {
			case recursive || hasWildcard(argv[0]):
				return a.rmTree(cmd.Context(), argv[0], f, dryRun)
			case f != nil:
				return usageErr(errors.New("rm: --include and --exclude choose among the objects under a prefix: add -r"))
			}
			return a.rmOne(cmd.Context(), argv[0], dryRun)
		},
	}
	cmd.Flags().BoolVarP(&recursive, "recursive", "r", false, "remove every object under the prefix or directory")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print what would be removed, and remove nothing")
	filterFlags(cmd.Flags(), &filter)
	return cmd
}

// rmResult is what rm reports.
type rmResult struct {
	Removed int  `json:"removed"`
	DryRun  bool `json:"dry_run,omitempty"`
}

func (a *app) rmOne(ctx context.Context, raw string, dryRun bool) error {
	s, key, err := a.openObject(ctx, raw)
	if err != nil {
		return err
	}
	defer s.Close()
	if _, err := s.Head(ctx, key); err != nil {
		return fmt.Errorf("%s: %w", raw, err)
	}
	if !dryRun {
		if err := s.Delete(ctx, key, nil); err != nil {
			return fmt.Errorf("%s: %w", raw, err)
		}
	}
	if err := a.rmListed(raw, dryRun); err != nil {
		return err
	}
	return a.rmReport(rmResult{Removed: 1, DryRun: dryRun})
}

func (a *app) rmTree(ctx context.Context, raw string, f *transfer.Filter, dryRun bool) error {
	loc, s, err := a.openList(ctx, raw)
	if err != nil {
		return err
	}
	defer s.Close()
	takes, err := treeOf(&loc, f)
	if err != nil {
		return err
	}
	n, err := transfer.Remove(ctx, s, loc.Key, takes, dryRun, func(key string) error { return a.rmListed(rmURL(loc, key), dryRun) })
	if err != nil {
		return fmt.Errorf("%s: %w", raw, err)
	}
	if n == 0 {
		return &store.Error{Op: "rm", Key: raw, Kind: store.ErrNotExist, Err: errors.New("nothing under it")}
	}
	return a.rmReport(rmResult{Removed: n, DryRun: dryRun})
}

func rmURL(loc store.Location, key string) string {
	loc.Key = key
	return loc.String()
}

// rmListed names one key removed (or, on a dry run, that would be).
func (a *app) rmListed(url string, dryRun bool) error {
	switch {
	case a.format == "json":
		return writeJSON(a.out, struct {
			Key string `json:"key"`
		}{url})
	case dryRun: // what was asked for, even with --quiet
		_, err := fmt.Fprintf(a.out, "would remove %s\n", url)
		return err
	case a.quiet:
		return nil
	}
	_, err := fmt.Fprintf(a.out, "removed %s\n", url)
	return err
}

func (a *app) rmReport(r rmResult) error {
	return a.summary(r, r.DryRun, "dry run: would remove %d object(s); nothing was removed", "removed %d object(s)", r.Removed)
}

// summary prints the last line of a command that acts on many objects: v as JSON, nothing
// with --quiet, else the line for a dry run or for what was done, each formatted with n.
func (a *app) summary(v any, dryRun bool, would, did string, n int) error {
	switch {
	case a.format == "json":
		return writeJSON(a.out, v)
	case a.quiet:
		return nil
	case dryRun:
		did = would
	}
	_, err := fmt.Fprintf(a.out, did+"\n", n)
	return err
}
