package export

import (
	"context"
	"time"

	"github.com/wharfdata/wharf/store"
)

// ResolvePrefix returns e's destination for a run on day with runID: what validate checks
// for --date and --run-id.
func ResolvePrefix(e *Export, day time.Time, runID string) (string, error) {
	return Expand(e.Destination, e.VarsFor(day, runID))
}

// ValidateURL opens the prefix at prefixURL with cfg and validates it (see Validate).
func ValidateURL(ctx context.Context, prefixURL string, cfg *store.Config, deep bool) (*Validation, error) {
	s, err := store.Open(ctx, prefixURL, cfg)
	if err != nil {
		return nil, newErr("validate", prefixURL, ErrVerifyManifestRead, err)
	}
	defer s.Close()
	return Validate(ctx, s, prefixURL, deep, StoreOpener(cfg))
}

// CheckDestination checks, before anything is opened, that e's destination can be opened as
// an export destination: its URL and its store options (endpoint rules, credential
// references), and that a custom endpoint outside this machine is allowed (the config's
// endpoint_allowlist or WHARF_ENDPOINT_ALLOWLIST), as the export-destinations contract asks.
func (e *Export) CheckDestination() error {
	sample, err := Expand(e.Destination, Vars{Date: "2006-01-02", Table: "t", Export: "e", RunID: "r"})
	if err != nil {
		return err
	}
	c := e.Store
	c.RequireAllow = true
	return store.Check(sample, &c)
}
