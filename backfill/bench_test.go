package backfill

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/wharfdata/wharf/store"
)

// The framing benchmarks read one split from a mem store through the fetcher, the decoder and
// the framer into a sink that drops the batches. Besides MB/s of records they report
// MB/cpu-s: megabytes of records per second of this process's CPU time, which the load of a
// shared machine changes far less than the wall clock. A profile:
//
//	go test ./backfill -run '^$' -bench Frame -cpuprofile cpu.out

// BenchmarkFrameZstd reads one zstd object: BACKFILL_BENCH_FILE (such as four of
// bench/backfill.sh's objects joined), else 64 MiB of generated NDJSON.
func BenchmarkFrameZstd(b *testing.B) {
	data := benchZstd(b)
	src := memStore()
	info := put(b, src, "logs/x.ndjson.zst", data)
	benchSplit(b, src, &Split{ID: "x", Members: []Member{{Key: "logs/x.ndjson.zst", Size: info.Size, ETag: info.ETag}}})
}

// BenchmarkFrameGzipSmall reads a split of 1,000 gzip objects of about 8 KiB of records each.
func BenchmarkFrameGzipSmall(b *testing.B) {
	src := memStore()
	rng := rand.New(rand.NewPCG(1, 2))
	sp := &Split{ID: "x"}
	for i := range 1000 {
		key := fmt.Sprintf("logs/obj-%05d.ndjson.gz", i)
		info := put(b, src, key, encode(b, "gz", benchLines(rng, 8<<10)))
		sp.Members = append(sp.Members, Member{Key: key, Size: info.Size, ETag: info.ETag})
	}
	benchSplit(b, src, sp)
}

func benchSplit(b *testing.B, src *store.Store, sp *Split) {
	cfg := DefaultConfig()
	j := &Job{cfg: cfg, src: src, bufs: newBufPool(), decoding: make(chan struct{}, 1)}
	j.m = newMetrics(j)
	read := func() (n int64) {
		err := reader{job: j}.readSplit(context.Background(), sp, Watermark{}, func(bt *Batch) error {
			n += int64(len(bt.Data))
			bt.recycle()
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		return n
	}
	n := read()
	b.SetBytes(n)
	c0 := cpuTime()
	for b.Loop() {
		read()
	}
	if cpu := cpuTime() - c0; cpu > 0 {
		b.ReportMetric(float64(n)*float64(b.N)/cpu.Seconds()/1e6, "MB/cpu-s")
	}
}

func benchZstd(b *testing.B) []byte {
	if path := os.Getenv("BACKFILL_BENCH_FILE"); path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		return data
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithWindowSize(2<<20))
	if err != nil {
		b.Fatal(err)
	}
	lines := benchLines(rand.New(rand.NewPCG(1, 1)), 64<<20)
	return enc.EncodeAll([]byte(strings.Join(lines, "\n")+"\n"), nil)
}

// benchLines makes about n bytes of NDJSON log lines of 60 to 400 bytes, as
// bench/backfill.sh does.
func benchLines(rng *rand.Rand, n int) []string {
	words := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india"}
	levels := []string{"info", "warn", "error"}
	var lines []string
	for size := 0; size < n; {
		var msg strings.Builder
		for w := range 5 + rng.IntN(56) {
			if w > 0 {
				msg.WriteByte(' ')
			}
			msg.WriteString(words[rng.IntN(len(words))])
		}
		l := fmt.Sprintf(`{"seq":%d,"level":%q,"host":"h%03d","msg":%q}`, len(lines), levels[rng.IntN(3)], rng.IntN(1000), msg.String())
		lines = append(lines, l)
		size += len(l) + 1
	}
	return lines
}
