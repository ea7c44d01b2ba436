package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/wharfdata/wharf/internal/textfmt"
	"github.com/wharfdata/wharf/transfer"
)

func (a *app) duCommand() *cobra.Command {
	var human bool
	cmd := &cobra.Command{
		Use:   "du URL",
		Short: "Count the objects under a prefix and add up their sizes",
		Long: `Count the objects under a prefix or directory and add up their sizes, following every
page of the listing.

As with rm -r, s3://b/logs and s3://b/logs/ both mean every key under logs/ (never
logs-old/); a bucket's URL means the whole bucket. A prefix with nothing under it is 0
objects, 0 bytes; a bucket that does not exist is WHARF_BUCKET_MISSING. A listing that
fails part-way fails the command: no partial total is printed as if it were the whole.

Output: "N object(s), B bytes (human size) under URL"; with -H the size is only in KiB,
MiB, GiB…; with --format json, {"url":…,"objects":N,"bytes":B}.`,
		Example: `  wharf du ./examples/data
  wharf du -H s3://my-bucket/logs/2024/
  wharf du --format json s3://my-bucket/ | jq .bytes`,
		Args: args(1, 1, "one URL"),
		RunE: func(cmd *cobra.Command, argv []string) error {
			return a.du(cmd.Context(), argv[0], human)
		},
	}
	cmd.Flags().BoolVarP(&human, "human-readable", "H", false, "the size in KiB, MiB, GiB… only")
	return cmd
}

func (a *app) du(ctx context.Context, raw string, human bool) error {
	loc, s, err := a.openPrefix(ctx, raw)
	if err != nil {
		return err
	}
	defer s.Close()
	u, err := transfer.Sum(ctx, s, loc.Key)
	if err != nil && u.Objects > 0 {
		return fmt.Errorf("%s: the listing failed after %d object(s): %w", raw, u.Objects, err)
	} else if err != nil {
		return fmt.Errorf("%s: %w", raw, err)
	}
	url := loc.String()
	return a.show(struct {
		URL string `json:"url"`
		transfer.Usage
	}{url, u}, func(w io.Writer) error {
		size := fmt.Sprintf("%d bytes (%s)", u.Bytes, textfmt.Size(u.Bytes))
		if human {
			size = textfmt.Size(u.Bytes)
		}
		_, err := fmt.Fprintf(w, "%d object(s), %s under %s\n", u.Objects, size, url)
		return err
	})
}
