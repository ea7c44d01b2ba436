package main

import (
	"math"
	"runtime/debug"
	"testing"

	"github.com/wharfdata/wharf/backfill"
	"github.com/wharfdata/wharf/ship"
	"github.com/wharfdata/wharf/transfer"
)

// Every command sets its job's memory bound in one place, unless GOMEMLIMIT is the user's.
func TestLimitMemoryHonoursGOMEMLIMIT(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	a := &app{getenv: func(string) string { return "" }}
	restore := a.limitMemory(100 << 20)
	if got := debug.SetMemoryLimit(-1); got != 100<<20 {
		t.Errorf("without GOMEMLIMIT the limit is %d, want the job's bound", got)
	}
	restore()
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("after restore the limit is %d, want the earlier one", got)
	}
	a.getenv = func(k string) string {
		if k == "GOMEMLIMIT" {
			return "1GiB"
		}
		return ""
	}
	defer a.limitMemory(100 << 20)()
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("with GOMEMLIMIT given the limit is %d, want it left as the user set it", got)
	}
}

// The bounds the jobs report follow what bounds their live memory, as their docs say.
func TestJobsReportTheirMemoryBound(t *testing.T) {
	b := backfill.DefaultConfig()
	b.MaxInFlight, b.ReadWindow = 4, 16<<20
	if got := b.MemoryBound(); got != 4*16<<20+12<<20 {
		t.Errorf("backfill: %d, want max_in_flight × read_window + 12 MiB", got)
	}
	s := ship.DefaultConfig()
	s.UploadConcurrency, s.PartSize = 3, 8<<20
	if got := s.MemoryBound(); got != 3*8<<20+40<<20 {
		t.Errorf("ship: %d, want upload_concurrency × part_size + 40 MiB", got)
	}
	if one, many := transfer.MemoryBound(16, 1, 16<<20), transfer.MemoryBound(16, 100, 16<<20); one != 4*16<<20+24<<20 || many != 8*16<<20+24<<20 {
		t.Errorf("cp: one file %d, many %d; want 4 and 8 parts of 16 MiB + 24 MiB", one, many)
	}
	if got := transfer.MemoryBound(1, 100, 1<<20); got != 4*5<<20+24<<20 {
		t.Errorf("cp with 1 MiB parts: %d, want parts counted at S3's 5 MiB least", got)
	}
}
