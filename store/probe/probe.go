package probe

import (
	"time"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/store"
)

const sectionProbe = "Probe and coordination"

// The kinds the probe reports.
var (
	ErrInconclusive = errcode.New(errcode.Def{Name: "WHARF_PROBE_INCONCLUSIVE", Text: "probe inconclusive",
		Exit: errcode.ExitFailed, Class: errcode.Transient, Section: sectionProbe,
		Meaning: "A capability could not be shown either way (the store answered 501 or 403, or the connection failed). Shown beside the capability in `wharf probe`, whose own exit is 0.",
		Remedy:  "Fix access or connectivity and probe again; an inconclusive capability is never counted as supported."})
	ErrCoordinationUnproven = errcode.New(errcode.Def{Name: "WHARF_COORDINATION_UNPROVEN", Text: "store not proven to enforce conditional writes",
		Exit: errcode.ExitFailed, Class: errcode.Fatal, Standing: true, Section: sectionProbe,
		Meaning: "Something that needs conditional writes (leases, fenced commits, `conditional_put: create`) was asked of a store that the probe did not prove `cas`.",
		Remedy:  "Run `wharf probe URL` to see which capability is missing; use a store that enforces conditional writes, or a single writer."})
)

// Capability verdicts.
const (
	Yes          = "yes"
	No           = "no"
	Inconclusive = "inconclusive"
)

// Coordination modes.
const (
	CAS          = "cas"           // conditional create and replace proven: leases are safe
	SingleWriter = "single-writer" // only one writer may use the store
)

// The capabilities the probe checks, by their JSON names.
const (
	CapConditionalCreate  = "conditional_create"  // a second create-if-absent fails
	CapConditionalReplace = "conditional_replace" // a stale If-Match put fails and a current one replaces
	CapConditionalDelete  = "conditional_delete"  // a delete with a stale If-Match fails
	CapPinnedRead         = "pinned_read"         // a Get pinned to a stale ETag fails
	CapUserMetadata       = "user_metadata"       // user metadata round-trips
	CapListAfterWrite     = "list_after_write"    // a fresh object is listed
	// CapChecksums: a put whose CRC-32C does not match its body is refused. Reported only
	// for a store whose puts send one for the server to check (S3); not part of
	// Capabilities, which every store reports.
	CapChecksums = "checksums"
)

// Capabilities lists every capability in report order.
var Capabilities = []string{
	CapConditionalCreate, CapConditionalReplace, CapConditionalDelete,
	CapPinnedRead, CapUserMetadata, CapListAfterWrite,
}

// CapabilityResult is one capability's verdict and how it was shown.
type CapabilityResult struct {
	Verdict  string `json:"verdict"`        // Yes, No or Inconclusive
	Evidence string `json:"evidence"`       // what was done and what the store answered
	Code     string `json:"code,omitempty"` // WHARF_PROBE_INCONCLUSIVE when inconclusive
	// Cause is the code of the failure that made the capability inconclusive, when a request
	// failed (WHARF_FORBIDDEN for refused credentials, WHARF_UNAVAILABLE for a store that
	// does not answer…).
	Cause string `json:"cause,omitempty"`
}

// Result is what the probe found.
type Result struct {
	Store            store.Description           `json:"store"`
	Coordination     string                      `json:"coordination"` // CAS or SingleWriter
	Reason           string                      `json:"reason"`       // why that mode
	Capabilities     map[string]CapabilityResult `json:"capabilities"`
	ClockSkewSeconds float64                     `json:"clock_skew_seconds"` // store clock − local clock
	ClockSkewWarning string                      `json:"clock_skew_warning"` // "" when the skew is small
	Sentinel         string                      `json:"sentinel,omitempty"` // the key used, deleted after
	// Swept is how many sentinels that earlier probes with the same Options.Tag left (killed,
	// or cut off before they could delete theirs) this probe deleted.
	Swept    int           `json:"swept,omitempty"`
	Duration time.Duration `json:"-"`
	// Remembered, when set, says the result is a verdict Verdicts remembered from a probe
	// at that time, not a probe run now.
	Remembered time.Time `json:"remembered,omitzero"`
}

// Options modify Probe.
type Options struct {
	Now func() time.Time // local clock; nil means time.Now
	// Tag names the prober in its sentinel's key (Prefix + Tag + "-" + a random id): 1 to 100
	// letters, digits, '.', '_' or '-'. A probe with a tag deletes, besides its own sentinel,
	// every sentinel with the same tag that earlier probes left behind (a process killed
	// mid-probe, a store that stopped answering before the sentinel's delete). Give a tag only
	// to a prober of which one runs at a time: the ship service tags its probe with its node
	// id and its spool's epoch, which one process at a time owns.
	Tag string
}

// RequireCAS returns ErrCoordinationUnproven unless r proves cas.
func (r *Result) RequireCAS() error {
	if r.Coordination == CAS {
		return nil
	}
	return &store.Error{Op: "probe", Key: r.Store.Location, Kind: ErrCoordinationUnproven, Err: errorString(r.Reason)}
}

type errorString string

func (e errorString) Error() string { return string(e) }
