package dataset

import "github.com/wharfdata/wharf/errcode"

const section = "Datasets"

// The kinds of validation failures, each an *errcode.Code.
var (
	// ErrVerifyManifestRead: validate could not read the prefix (a missing bucket, no access,
	// the store unavailable). Never reported as a legacy run.
	ErrVerifyManifestRead = errcode.New(errcode.Def{Name: "WHARF_VERIFY_MANIFEST_READ_ERROR", Text: "cannot read the manifest",
		Exit: errcode.ExitFailed, Class: errcode.Transient, Section: section,
		Meaning: "Validation could not read the prefix (a missing bucket, no access, the store unavailable). Never reported as a legacy run.",
		Remedy:  "Fix access to the prefix and validate again."})
	// ErrNotCertified: validate read the prefix and it is not a certified export.
	ErrNotCertified = errcode.New(errcode.Def{Name: "WHARF_NOT_CERTIFIED", Text: "prefix is not a certified export",
		Exit: errcode.ExitFailed, Class: errcode.Outcome, Section: section,
		Meaning: "Validation read the prefix and it is not a certified export (no manifest, no `_SUCCESS`, or a part that does not match).",
		Remedy:  "Re-run the export, or treat the data as uncertified."})
)
