//go:build !unix

package backfill

import "time"

// cpuTime is not measured here: the benchmarks report no MB/cpu-s.
func cpuTime() time.Duration { return 0 }
