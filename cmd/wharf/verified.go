package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/export"
	"github.com/wharfdata/wharf/internal/textfmt"
	"github.com/wharfdata/wharf/reconcile"
)

// recordVerification records v, made now, as the last verification of e's run runID in the
// journal h reads, which 'wharf runs' then shows. A run the local journal does not hold, and
// bucket state, record nothing (export.History.RecordVerification).
func recordVerification(ctx context.Context, h export.History, e *export.Export, runID string, v export.Verification) error {
	v.At = time.Now().UTC()
	if _, err := h.RecordVerification(ctx, e, runID, v); err != nil {
		return fmt.Errorf("record the verification of run %s: %w", runID, err)
	}
	return nil
}

// reconciled is the verification a reconcile report makes: match when every chunk matches,
// mismatch when one does not, unknown when none mismatches but one is unknown.
func reconciled(r *reconcile.Report) export.Verification {
	result := "match"
	switch {
	case r.Mismatched > 0:
		result = "mismatch"
	case r.Unknown > 0:
		result = "unknown"
	}
	return export.Verification{By: export.VerifiedByReconcile, Result: result,
		Detail: fmt.Sprintf("%d chunks: %d match, %d mismatch, %d unknown", len(r.Chunks), r.Matched, r.Mismatched, r.Unknown)}
}

// validated is the verification a validation makes: certified, with its parts and rows, or
// not_certified, with its problems' codes.
func validated(v *dataset.Validation) export.Verification {
	by := export.VerifiedByValidate
	if v.Deep {
		by = export.VerifiedByValidateDeep
	}
	if v.Certified {
		return export.Verification{By: by, Result: "certified", Detail: fmt.Sprintf("%d parts, %d rows", v.Parts, v.Rows)}
	}
	var codes []string
	for _, p := range v.Problems {
		if !slices.Contains(codes, p.Code) {
			codes = append(codes, p.Code)
		}
	}
	return export.Verification{By: by, Result: "not_certified",
		Detail: fmt.Sprintf("%d problem(s): %s", len(v.Problems), strings.Join(codes, ", "))}
}

// verifiedText is the runs table's VERIFIED column: "2026-12-03 17:02:05 reconcile: match",
// or "-".
func verifiedText(v *export.Verification) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%s %s: %s", textfmt.Time(v.At), v.By, v.Result)
}
