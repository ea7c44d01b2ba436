package store

import (
	"time"
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
}

// ProbeResult is what the probe found.
type ProbeResult struct {
	Store            Description                 `json:"store"`
	Coordination     string                      `json:"coordination"` // CAS or SingleWriter
	Reason           string                      `json:"reason"`       // why that mode
	Capabilities     map[string]CapabilityResult `json:"capabilities"`
	ClockSkewSeconds float64                     `json:"clock_skew_seconds"` // store clock − local clock
	ClockSkewWarning string                      `json:"clock_skew_warning,omitempty"`
	Sentinel         string                      `json:"sentinel,omitempty"` // the key used, deleted after
	Duration         time.Duration               `json:"-"`
}

// ProbeOptions modify Probe.
type ProbeOptions struct {
	Now func() time.Time // local clock; nil means time.Now
}

// RequireCAS returns ErrCoordinationUnproven unless r proves cas.
func (r *ProbeResult) RequireCAS() error {
	if r.Coordination == CAS {
		return nil
	}
	return &Error{Op: "probe", Key: r.Store.Location, Kind: ErrCoordinationUnproven, Err: errorString(r.Reason)}
}

type errorString string

func (e errorString) Error() string { return string(e) }
