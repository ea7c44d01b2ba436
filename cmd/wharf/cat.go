package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/wharfdata/wharf/internal/atomicfile"
)

func (a *app) catCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "cat URL",
		Short: "Stream an object to standard output",
		Long: `Write one object's bytes to standard output as they arrive, without staging it in
memory or on disk. A read that breaks mid-body resumes where it stopped, pinned to the
object's ETag, so the output is the one version you started reading or an error, never
a mix of two.

The URL names one object: s3://bucket/key, or a local file path. A missing object fails
with WHARF_NOT_FOUND and exit code 1.`,
		Example: `  wharf cat ./examples/data/orders/2024-01-01.csv
  wharf cat s3://my-bucket/logs/app.ndjson | jq .level
  wharf cat s3://my-bucket/big.ndjson.gz | gunzip | head`,
		Args: args(1, 1, "one object URL"),
		RunE: func(cmd *cobra.Command, argv []string) error {
			return a.cat(cmd.Context(), argv[0])
		},
	}
}

func (a *app) cat(ctx context.Context, raw string) error {
	s, key, err := a.openObject(ctx, raw)
	if err != nil {
		return err
	}
	defer s.Close()
	obj, err := s.Get(ctx, key, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", raw, err)
	}
	defer obj.Close()
	if _, err := atomicfile.Copy(ctx, a.out, obj); err != nil {
		return fmt.Errorf("%s: %w", raw, err)
	}
	return nil
}
