package ship

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/spool"
)

// BenchmarkMinIOShipSmall ships small files (SHIP_BENCH_FILES, default 1,000, of 64 KiB) to
// MinIO per op, as bench/ship.sh's small set does: upload_concurrency 16 (or
// SHIP_BENCH_CONCURRENCY), create mode, delete_after_upload. It is the setup for profiling
// the service's per-file costs:
//
//	go test -run '^$' -bench MinIOShipSmall -benchtime 1x -cpuprofile cpu.out ./ship/
//
// or SHIP_BENCH_CPUPROFILE=cpu.out to profile the shipping without the spooling before it.
// bench/ship.sh, against s5cmd, is the benchmark proper.
func BenchmarkMinIOShipSmall(b *testing.B) {
	n := envInt("SHIP_BENCH_FILES", 1000)
	conc := envInt("SHIP_BENCH_CONCURRENCY", 16)
	url, sc, _ := minioDest(b, testenv.MinIO(b))
	// As bench/ship.sh does: the sources are written once, and each run moves hard links of
	// them into a fresh spool, so that local retention drops a link, not the data.
	srcDir := b.TempDir()
	data := make([]byte, 64<<10)
	for i := range data {
		data[i] = byte(i * 7)
	}
	for j := range n {
		data[0], data[1], data[2] = byte(j), byte(j>>8), byte(j>>16) // distinct content per file
		if err := os.WriteFile(filepath.Join(srcDir, fmt.Sprintf("f%06d.ndjson", j)), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	var shipped time.Duration
	var spoolTimes spoolTimes
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := filepath.Join(b.TempDir(), "spool")
		if _, err := spool.Init(dir); err != nil {
			b.Fatal(err)
		}
		links := b.TempDir()
		for j := range n {
			src, link := filepath.Join(srcDir, fmt.Sprintf("f%06d.ndjson", j)), filepath.Join(links, fmt.Sprintf("f%06d.ndjson", j))
			if err := os.Link(src, link); err != nil {
				b.Fatal(err)
			}
			if _, err := spool.Add(b.Context(), dir, link, spool.AddOptions{Dataset: "small", Time: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC), Clock: spool.ClockSynced}); err != nil {
				b.Fatal(err)
			}
		}
		cfg := DefaultConfig()
		cfg.Spool, cfg.To, cfg.Pipeline, cfg.Node = dir, fmt.Sprintf("%s/run-%d-%d", url, os.Getpid(), i), "bench", "n1"
		cfg.Store, cfg.Listen, cfg.Drain, cfg.UploadConcurrency = sc, ListenOff, true, conc
		ctx, cancel := context.WithTimeout(b.Context(), 10*time.Minute)
		opts := Options{OpenSpool: func(dir string) (Spool, error) {
			sp, err := spool.Open(dir, spool.OpenOptions{})
			return &timedSpool{Spool: sp, t: &spoolTimes}, err
		}}
		stopProfile := cpuProfile(b, i)
		start := time.Now()
		b.StartTimer()
		err := Run(ctx, cfg, opts)
		b.StopTimer()
		stopProfile()
		shipped += time.Since(start)
		cancel()
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n*b.N)/shipped.Seconds(), "files/s")
	b.ReportMetric(spoolTimes.uploaded.Seconds()*1e3/float64(n*b.N), "ms-uploaded/file")
	b.ReportMetric(spoolTimes.remove.Seconds()*1e3/float64(n*b.N), "ms-remove/file")
	b.ReportMetric(spoolTimes.refresh.Seconds()*1e3/float64(b.N), "ms-refresh/op")
}

// spoolTimes adds up the time spent in the spool's calls, across all goroutines.
type spoolTimes struct {
	mu                        sync.Mutex
	uploaded, remove, refresh time.Duration
}

func (t *spoolTimes) add(d *time.Duration, since time.Time) {
	t.mu.Lock()
	*d += time.Since(since)
	t.mu.Unlock()
}

// timedSpool times the spool calls the service makes per file.
type timedSpool struct {
	*spool.Spool
	t *spoolTimes
}

func (s *timedSpool) Uploaded(ctx context.Context, id uint64, key, etag, outcome string) error {
	defer s.t.add(&s.t.uploaded, time.Now())
	return s.Spool.Uploaded(ctx, id, key, etag, outcome)
}

func (s *timedSpool) Remove(ctx context.Context, id uint64) error {
	defer s.t.add(&s.t.remove, time.Now())
	return s.Spool.Remove(ctx, id)
}

func (s *timedSpool) Refresh(ctx context.Context) error {
	defer s.t.add(&s.t.refresh, time.Now())
	return s.Spool.Refresh(ctx)
}

// cpuProfile profiles the shipping of run i alone (not the spooling before it) into
// $SHIP_BENCH_CPUPROFILE (run 0) or that name with -i appended; without the variable it does
// nothing.
func cpuProfile(b *testing.B, i int) (stop func()) {
	name := os.Getenv("SHIP_BENCH_CPUPROFILE")
	if name == "" {
		return func() {}
	}
	if i > 0 {
		name += "-" + strconv.Itoa(i)
	}
	f, err := os.Create(name)
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}
