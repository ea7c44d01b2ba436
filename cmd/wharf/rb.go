package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/transfer"
)

func (a *app) rbCommand() *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "rb URL",
		Short: "Remove an empty bucket (or container, or directory); --force empties it first",
		Long: `Remove the bucket, container or file-store directory a URL names (the bucket alone:
s3://my-bucket, az://account/container, gs://my-bucket, ./local-store).

Without --force only an empty bucket is removed: one that holds an object fails with
WHARF_BUCKET_NOT_EMPTY and is left as it is, and a missing one with WHARF_BUCKET_MISSING.
With --force, wharf first removes every object (as 'wharf rm -r' does, in batches) and aborts
every incomplete upload where the store keeps them (S3 multipart uploads, Azure uncommitted
blocks), prints how many of each, then removes the bucket. A versioned S3 bucket keeps its
old versions and delete markers, which S3 counts as content: remove them with the store's
own tools first.

On Azure, which deletes a container with whatever it holds, emptiness is checked by a
listing just before the delete: a blob written in between goes with the container.`,
		Example: `  wharf rb s3://my-scratch-bucket
  wharf rb --force s3://my-scratch-bucket
  wharf rb ./local-store`,
		Args: args(1, 1, "one bucket URL"),
		RunE: func(cmd *cobra.Command, argv []string) error {
			return a.rb(cmd.Context(), argv[0], force)
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "remove every object and abort every incomplete upload first, then the bucket")
	return cmd
}

// rbResult is rb's JSON output.
type rbResult struct {
	Bucket  string `json:"bucket"`
	Objects int    `json:"objects_removed"`
	Uploads int    `json:"uploads_aborted"`
}

func (a *app) rb(ctx context.Context, raw string, force bool) error {
	loc, err := a.parseURL(raw)
	if err != nil {
		return err
	}
	if loc.Key != "" {
		return usageErr(fmt.Errorf("rb %s: give the bucket alone (%s), not a key or prefix", raw, loc.Root()))
	}
	s, err := a.open(ctx, loc)
	if err != nil {
		return fmt.Errorf("%s: %w", raw, err)
	}
	defer s.Close()
	res := rbResult{Bucket: loc.String()}
	if force {
		res.Objects, err = transfer.Remove(ctx, s, "", nil, false, func(string) error { return nil })
		if err != nil {
			return fmt.Errorf("%s: emptying it: %w (%d objects removed before)", raw, err, res.Objects)
		}
		up, err := transfer.Uploads(ctx, s, loc, transfer.UploadsOptions{Abort: true, Logger: a.log}, func(transfer.Pending) error { return nil })
		switch {
		case errors.Is(err, store.ErrUnsupported): // a store that keeps none
		case err != nil:
			return err
		case up.Failed != nil:
			return up.Failed
		default:
			res.Uploads = up.Taken
		}
	}
	if err := s.RemoveBucket(ctx); err != nil {
		if force && res.Objects > 0 {
			return fmt.Errorf("%s: %w (%d objects removed first)", raw, err, res.Objects)
		}
		return fmt.Errorf("%s: %w", raw, err)
	}
	switch {
	case a.format == "json":
		return writeJSON(a.out, res)
	case a.quiet:
		return nil
	case force:
		_, err = fmt.Fprintf(a.out, "removed %d object(s), aborted %d incomplete upload(s), removed bucket %s\n", res.Objects, res.Uploads, loc)
	default:
		_, err = fmt.Fprintf(a.out, "removed bucket %s\n", loc)
	}
	return err
}
