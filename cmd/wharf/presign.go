package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"
)

func (a *app) presignCommand() *cobra.Command {
	var expires string
	cmd := &cobra.Command{
		Use:   "presign URL",
		Short: "Print a URL that lets anyone who holds it read one object until it expires",
		Long: `Sign a URL that reads one object with a plain HTTP GET, for anyone who holds it and
until it expires, with no credentials of their own: an S3 presigned URL (SigV4), a Cloud
Storage V4 signed URL, an Azure SAS. Nothing is sent to the store: the object need not exist
yet, and a URL for one that does not exist answers 404.

The URL is itself a credential for that object: it goes to standard output only, and wharf
logs it nowhere. It is signed with the store's credentials as they are now: S3 signs with
the keys it holds (temporary keys of a role or SSO end the URL when they expire, whatever
--expires-in says), Cloud Storage needs a service-account key (service_account_file), Azure
the account key. An anonymous store, or one whose credentials cannot sign, fails with
WHARF_UNSUPPORTED saying why. S3 and Cloud Storage sign for at most 7 days.`,
		Example: `  wharf presign s3://my-bucket/reports/2024-01.csv
  wharf presign --expires-in 15m s3://my-bucket/reports/2024-01.csv
  curl -fsS "$(wharf presign s3://my-bucket/reports/2024-01.csv)" -o report.csv`,
		Args: args(1, 1, "one object URL"),
		RunE: func(cmd *cobra.Command, argv []string) error {
			d, err := parseExpiry(expires)
			if err != nil {
				return usageErr(fmt.Errorf("presign: --expires-in %q: %w", expires, err))
			}
			return a.presign(cmd.Context(), argv[0], d)
		},
	}
	cmd.Flags().StringVar(&expires, "expires-in", "1h", "how long the URL reads the object: a duration (15m, 24h) or seconds, as aws-cli's")
	return cmd
}

// parseExpiry reads --expires-in: a Go duration, or a whole number of seconds as aws-cli
// takes it.
func parseExpiry(s string) (time.Duration, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		s = strconv.FormatInt(n, 10) + "s"
	}
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return 0, fmt.Errorf("want a duration such as 15m or 24h, or seconds")
	case d <= 0:
		return 0, fmt.Errorf("want a positive duration")
	}
	return d, nil
}

// presignResult is presign's JSON output.
type presignResult struct {
	URL     string    `json:"url"`
	Expires time.Time `json:"expires"`
}

func (a *app) presign(ctx context.Context, raw string, expiry time.Duration) error {
	s, key, err := a.openObject(ctx, raw)
	if err != nil {
		return err
	}
	defer s.Close()
	at := time.Now().Add(expiry).UTC().Truncate(time.Second)
	u, err := s.PresignGet(ctx, key, expiry)
	if err != nil {
		return fmt.Errorf("%s: %w", raw, err)
	}
	if a.format == "json" {
		return writeJSON(a.out, presignResult{URL: u, Expires: at})
	}
	_, err = fmt.Fprintln(a.out, u)
	return err
}
