package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/probe"
)

// errContentionFailed is the cause when a contention check did not pass.
var errContentionFailed = errors.New("the store failed a contention check")

func (a *app) probeContention(ctx context.Context, raw string, writers, rounds int) error {
	if writers < 2 || rounds < 1 {
		return usageErr(fmt.Errorf("probe: --contention %d --rounds %d: want at least 2 writers and 1 round", writers, rounds))
	}
	s, err := a.openURL(ctx, raw)
	if err != nil {
		return err
	}
	defer s.Close()
	res, err := probe.Contention(ctx, s, probe.ContentionOptions{Writers: writers, Rounds: rounds})
	if err != nil {
		return fmt.Errorf("%s: %w", raw, err)
	}
	safe := res.SafeForLeases()
	if a.format == "json" {
		err = writeJSON(a.out, contentionJSON{res, safe, res.Duration.Seconds()})
	} else {
		res.Store.Location = asTyped(raw, res.Store.Location)
		err = res.WriteText(a.out)
	}
	if err != nil {
		return err
	}
	if !safe {
		return &store.Error{Op: "probe", Key: raw, Kind: probe.ErrCoordinationUnproven, Err: errContentionFailed}
	}
	return nil
}

// contentionJSON adds the verdict and the duration in seconds to the result.
type contentionJSON struct {
	*probe.ContentionResult
	SafeForLeases bool    `json:"safe_for_leases"`
	Seconds       float64 `json:"seconds"`
}
