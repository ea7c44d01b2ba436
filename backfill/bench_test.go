package backfill

import (
	"context"
	"io"
	"os"
	"testing"
)

// BenchmarkFrameZstd reads BACKFILL_BENCH_FILE (a zstd NDJSON file) as one split of one
// member, through the fetcher, the decoder and the framer, into a discarding sink.
func BenchmarkFrameZstd(b *testing.B) {
	path := os.Getenv("BACKFILL_BENCH_FILE")
	if path == "" {
		b.Skip("BACKFILL_BENCH_FILE not set")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	src := memStore()
	info := put(b, src, "logs/x.ndjson.zst", data)
	sp := &Split{ID: "x", Members: []Member{{Key: "logs/x.ndjson.zst", Size: info.Size, ETag: info.ETag}}}
	cfg := DefaultConfig()
	j := &Job{cfg: cfg, src: src}
	j.m = newMetrics(j)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		err := reader{job: j}.readSplit(context.Background(), sp, Watermark{}, func(bt *Batch) error {
			_, err := io.Discard.Write(bt.Data)
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
