package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
)

func (a *app) statCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "stat URL",
		Short: "Show an object's size, ETag, checksum, last-modified time, content type, headers and metadata",
		Long: `Show what the store records about one object, without reading its body: size,
ETag (the generation on GCS), the CRC-32C of its bytes that copies check (the store's own, or
the one wharf recorded when it wrote the object; "-" when it carries none), last-modified
time, content type, the storage class where the store names one (S3 leaves out STANDARD), the standard headers it carries (cache-control, content-disposition,
content-encoding, content-language) and user metadata (keys lowercase, such as wharf-sha256).

JSON output (--format json) is one object: {"key","size","etag","crc32c","last_modified",
"content_type","storage_class","headers","metadata"}, headers as {"cache_control","content_disposition",
"content_encoding","content_language"}; fields the store does not record are left out.`,
		Example: `  wharf stat ./examples/data/orders/2024-01-01.csv
  wharf stat s3://my-bucket/exports/orders/manifest.json
  wharf stat --format json s3://my-bucket/key | jq -r .etag`,
		Args: args(1, 1, "one object URL"),
		RunE: func(cmd *cobra.Command, argv []string) error {
			return a.stat(cmd.Context(), argv[0])
		},
	}
}

func (a *app) stat(ctx context.Context, raw string) error {
	s, key, err := a.openObject(ctx, raw)
	if err != nil {
		return err
	}
	defer s.Close()
	info, err := s.Head(ctx, key)
	if err != nil {
		return fmt.Errorf("%s: %w", raw, err)
	}
	if a.format == "json" {
		return writeJSON(a.out, info)
	}
	return writeStat(a.out, raw, info)
}
