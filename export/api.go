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
func ValidateURL(ctx context.Context, prefixURL string, cfg store.Config, deep bool) (*Validation, error) {
	s, err := store.OpenURL(ctx, prefixURL, cfg)
	if err != nil {
		return nil, newErr("validate", prefixURL, ErrVerifyManifestRead, err)
	}
	defer s.Close()
	return Validate(ctx, s, prefixURL, deep)
}
