package backfill

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/mem"
)

// corpus is a set of NDJSON objects written to a store, and the records they hold.
type corpus struct {
	records map[string]int // record → how many times it was written
	total   int
}

// record is the text of record i of object name.
func record(name string, i int) string {
	return fmt.Sprintf(`{"obj":%q,"i":%d,"pad":"%s"}`, name, i, strings.Repeat("x", i%50))
}

// encode makes the bytes of an object holding lines, compressed as kind ("plain", "gz",
// "gzmulti", "zst", "zstmulti").
func encode(t testing.TB, kind string, lines []string) []byte {
	t.Helper()
	var parts [][]string
	switch kind {
	case "gzmulti", "zstmulti":
		h := len(lines) / 2
		parts = [][]string{lines[:h], lines[h:], nil}
	default:
		parts = [][]string{lines}
	}
	var out bytes.Buffer
	for _, p := range parts {
		body := strings.Join(p, "\n")
		if len(p) > 0 {
			body += "\n"
		}
		switch kind {
		case "plain":
			out.WriteString(body)
		case "gz", "gzmulti":
			zw := gzip.NewWriter(&out)
			zw.Write([]byte(body))
			zw.Close()
		case "zst", "zstmulti":
			zw, _ := zstd.NewWriter(&out)
			zw.Write([]byte(body))
			zw.Close()
		}
	}
	return out.Bytes()
}

var exts = map[string]string{"plain": ".ndjson", "gz": ".ndjson.gz", "gzmulti": ".gz", "zst": ".ndjson.zst", "zstmulti": ".zst"}

// fill writes n objects under prefix to s, of the kinds in turn, each with up to maxRecords
// records; it returns the corpus.
func fill(t testing.TB, s *store.Store, prefix string, n, maxRecords int, kinds ...string) *corpus {
	t.Helper()
	c := &corpus{records: map[string]int{}}
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	for i := range n {
		kind := kinds[i%len(kinds)]
		name := fmt.Sprintf("%sobj-%05d%s", prefix, i, exts[kind])
		var lines []string
		for r := range rng.IntN(maxRecords) + 1 {
			lines = append(lines, record(name, r))
			c.records[record(name, r)]++
			c.total++
		}
		put(t, s, name, encode(t, kind, lines))
	}
	return c
}

func put(t testing.TB, s *store.Store, key string, b []byte) store.ObjectInfo {
	t.Helper()
	info, err := s.Put(context.Background(), key, bytes.NewReader(b), &store.PutOptions{Size: int64(len(b))})
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// check compares the records of out (NDJSON lines) with the corpus: every record at least
// once, and with exactly, each exactly once.
func (c *corpus) check(t testing.TB, out []byte, exactly bool) {
	t.Helper()
	got := map[string]int{}
	n := 0
	for l := range bytes.SplitSeq(bytes.TrimSuffix(out, []byte("\n")), []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		got[string(l)]++
		n++
	}
	for r, want := range c.records {
		if got[r] < want || exactly && got[r] != want {
			t.Fatalf("record %s delivered %d times, want %d (exactly: %v); %d records out, %d in", r, got[r], want, exactly, n, c.total)
		}
	}
	for r := range got {
		if _, ok := c.records[r]; !ok {
			t.Fatalf("record %q delivered but never written", r)
		}
	}
}

// testConfig is a config for fast tests.
func testConfig(source, to string) Config {
	cfg := DefaultConfig()
	cfg.Source, cfg.To, cfg.Job, cfg.Node = source, to, "test", "node-a"
	cfg.SplitBytes = 1 << 20
	cfg.SplitMaxObjects = 7
	cfg.LeaseTTL, cfg.CommitInterval, cfg.PollInterval = 2*time.Second, 50*time.Millisecond, 20*time.Millisecond
	cfg.ReadRequest, cfg.ReadWindow = 64<<10, 256<<10
	cfg.MaxAttempts = 2
	return cfg
}

func memStore() *store.Store { return store.New(mem.New(), nil) }

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.b.Bytes())
}

// runJob runs one worker of cfg over src into sink with coordinator c.
func runJob(ctx context.Context, t testing.TB, cfg Config, c *Coordinator, src *store.Store, sink Sink, replan bool) (*Job, error) {
	t.Helper()
	j, err := New(cfg, Options{Coordinator: c, Source: src, Prefix: "logs/", Sink: sink, Replan: replan})
	if err != nil {
		t.Fatal(err)
	}
	return j, j.Run(ctx)
}
