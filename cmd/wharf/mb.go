package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
)

func (a *app) mbCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "mb URL",
		Short: "Make a bucket (or container, or directory)",
		Long: `Create the bucket, container or directory a URL names. Creating one that already
exists and that you own succeeds, so mb is safe to run twice. The URL names the bucket
only: s3://my-bucket, az://account/container, or a local directory path.

A store that cannot create buckets (stdout, or a bucket owned by someone else) fails
with WHARF_UNSUPPORTED or WHARF_FORBIDDEN.`,
		Example: `  wharf mb s3://my-new-bucket
  wharf --endpoint http://127.0.0.1:9000 mb s3://scratch
  wharf mb ./local-store`,
		Args: args(1, 1, "one bucket URL"),
		RunE: func(cmd *cobra.Command, argv []string) error {
			return a.mb(cmd.Context(), argv[0])
		},
	}
}

// mbResult is mb's JSON output: the bucket, which now exists (made, or already yours).
type mbResult struct {
	Bucket string `json:"bucket"`
}

func (a *app) mb(ctx context.Context, raw string) error {
	loc, err := a.parseURL(raw)
	if err != nil {
		return err
	}
	if loc.Key != "" {
		return usageErr(fmt.Errorf("mb %s: give the bucket alone (%s), not a key or prefix", raw, loc.Root()))
	}
	s, err := a.open(ctx, loc)
	if err != nil {
		return fmt.Errorf("%s: %w", raw, err)
	}
	defer s.Close()
	if err := s.MakeBucket(ctx); err != nil {
		return fmt.Errorf("%s: %w", raw, err)
	}
	switch {
	case a.format == "json":
		return writeJSON(a.out, mbResult{Bucket: loc.String()})
	case !a.quiet:
		_, err = fmt.Fprintf(a.out, "made bucket %s\n", loc)
	}
	return err
}
