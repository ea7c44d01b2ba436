package export

import (
	"testing"
	"time"
)

// A full run's guard orders runs by when they started: by the snapshot's wharf.run-started,
// or, without it, by the second its run id names, never by the ids' random part (two runs of
// one second, the later with the smaller suffix, were refused as stale).
func TestStartedAfter(t *testing.T) {
	at := time.Date(2026, 12, 7, 21, 26, 38, 500_000_000, time.UTC)
	for _, tc := range []struct {
		summary map[string]string
		want    bool
	}{
		{map[string]string{summaryRunID: "20261207T212638Z-a5e474", summaryRunStarted: "2026-12-07T21:26:38.4Z"}, false},
		{map[string]string{summaryRunID: "20261207T212638Z-000000", summaryRunStarted: "2026-12-07T21:26:38.6Z"}, true},
		{map[string]string{summaryRunID: "20261207T212638Z-ffffff"}, false}, // the same second: not after
		{map[string]string{summaryRunID: "20261207T212639Z-000000"}, true},
		{map[string]string{summaryRunID: "20261207T212637Z-ffffff"}, false},
		{map[string]string{summaryRunID: "not-a-run-id"}, false},
	} {
		if got := startedAfter(tc.summary, at); got != tc.want {
			t.Errorf("startedAfter(%v) = %v, want %v", tc.summary, got, tc.want)
		}
	}
}
