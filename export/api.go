package export

import (
	"fmt"
	"time"

	"github.com/wharfdata/wharf/store"
)

// ResolvePrefix returns e's destination for a run on day with runID: what validate checks
// for --date and --run-id.
func ResolvePrefix(e *Export, day time.Time, runID string) (string, error) {
	return Expand(e.Destination, e.VarsFor(day, runID))
}

// CheckDestination checks, before anything is opened, that e's destination can be opened as
// an export destination: its URL and its store options (endpoint rules, credential
// references), that a custom endpoint outside this machine is allowed (the config's
// endpoint_allowlist or WHARF_ENDPOINT_ALLOWLIST), as the export-destinations contract asks,
// and that it keeps what is written (not standard output).
func (e *Export) CheckDestination() error {
	sample, err := sampleDestination(e)
	if err != nil {
		return err
	}
	c := e.Store
	c.RequireAllow = true
	if err := store.Check(sample, &c); err != nil {
		return err
	}
	return e.checkKept(&c)
}

func sampleDestination(e *Export) (string, error) {
	return Expand(e.Destination, Vars{Date: "2006-01-02", Table: "t", Export: "e", RunID: "r"})
}

// checkKept refuses a destination that keeps nothing (a write-only stream: standard output),
// before the source is read: a run reads back what it wrote (validate, resume, the next run's
// check of _SUCCESS), and a part on a stream could be neither listed in a certified dataset
// nor resumed. A destination that does not parse is left to the store to name.
func (e *Export) checkKept(c *store.Config) error {
	sample, err := sampleDestination(e)
	if err != nil {
		return nil
	}
	loc, err := c.ParseURL(sample)
	if err != nil || !c.WriteOnly(loc) {
		return nil
	}
	return newErr("config", e.Name+".destination", ErrConfig,
		fmt.Errorf("%q is standard output, which keeps nothing: an export writes parts, manifest.json and _SUCCESS and reads them back (validate, resume), so give a directory or a store URL (wharf cat prints a part from there)", e.Destination))
}
