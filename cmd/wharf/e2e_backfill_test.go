package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"golang.org/x/sync/errgroup"

	"github.com/wharfdata/wharf/export"
	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
)

// fleetObjects is how many objects the fleet tests read: mixed plain, gzip (some
// multi-member) and zstd (some multi-frame). The ~1 GB run is bench/backfill.sh's.
const fleetObjects = 2000

// uploadCorpus writes n NDJSON objects under prefix and returns each record's sha256 with
// how many times it was written.
func uploadCorpus(t *testing.T, s *store.Store, prefix string, n int) map[[32]byte]int {
	t.Helper()
	kinds := []string{"plain", "gz", "gzmulti", "zst", "zstmulti"}
	exts := map[string]string{"plain": ".ndjson", "gz": ".ndjson.gz", "gzmulti": ".log.gz", "zst": ".ndjson.zst", "zstmulti": ".zst"}
	want := map[[32]byte]int{}
	bodies := make([][]byte, n)
	rng := rand.New(rand.NewPCG(7, 7))
	for i := range n {
		kind := kinds[i%len(kinds)]
		var lines []string
		for r := range 10 + rng.IntN(30) {
			l := fmt.Sprintf(`{"object":%d,"record":%d,"kind":%q,"msg":"%s"}`, i, r, kind, strings.Repeat("m", rng.IntN(200)))
			lines = append(lines, l)
			want[sha256.Sum256([]byte(l))]++
		}
		bodies[i] = encodeObject(kind, lines)
	}
	g := new(errgroup.Group)
	g.SetLimit(16)
	for i, b := range bodies {
		key := fmt.Sprintf("%sobj-%05d%s", prefix, i, exts[kinds[i%len(kinds)]])
		g.Go(func() error {
			_, err := s.Put(context.Background(), key, bytes.NewReader(b), &store.PutOptions{Size: int64(len(b))})
			return err
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	return want
}

// encodeObject compresses lines as kind; the multi kinds are two members or frames.
func encodeObject(kind string, lines []string) []byte {
	parts := [][]string{lines}
	if strings.HasSuffix(kind, "multi") {
		parts = [][]string{lines[:len(lines)/2], lines[len(lines)/2:]}
	}
	var out bytes.Buffer
	for _, p := range parts {
		body := []byte(strings.Join(p, "\n") + "\n")
		switch {
		case kind == "plain":
			out.Write(body)
		case strings.HasPrefix(kind, "gz"):
			zw := gzip.NewWriter(&out)
			zw.Write(body)
			zw.Close()
		default:
			zw, _ := zstd.NewWriter(&out)
			zw.Write(body)
			zw.Close()
		}
	}
	return out.Bytes()
}

// countRecords hashes each line of out into got.
func countRecords(got map[[32]byte]int, out []byte) {
	for l := range bytes.Lines(out) {
		if l = bytes.TrimSuffix(l, []byte("\n")); len(l) > 0 {
			got[sha256.Sum256(l)]++
		}
	}
}

// worker is one running `wharf backfill` process.
type worker struct {
	cmd    *exec.Cmd
	out    *os.File
	stderr bytes.Buffer
	done   chan error
}

func startWorker(t *testing.T, c cli, node string, outPath string, args []string) *worker {
	t.Helper()
	out, err := os.OpenFile(outPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	c.env = append(append([]string(nil), c.env...), "WHARF_NODE_ID="+node, "WHARF_TEST_BACKFILL_PAUSE=15ms")
	w := &worker{cmd: c.command(args...), out: out, done: make(chan error, 1)}
	w.cmd.Stdout, w.cmd.Stderr = out, &w.stderr
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { w.done <- w.cmd.Wait(); out.Close() }()
	t.Cleanup(func() {
		if w.cmd.ProcessState == nil {
			_ = w.cmd.Process.Kill()
			<-w.done
		}
	})
	return w
}

// runFleet runs three workers of one job over fleetObjects objects, SIGKILLs one in the
// middle and starts it again, and calls during(t) while they run (another fault). Every
// worker must exit 0. It returns the records the workers wrote to standard output.
func runFleet(t *testing.T, c cli, args []string, during func()) []byte {
	t.Helper()
	dir := t.TempDir()
	var ws []*worker
	for i := range 3 {
		ws = append(ws, startWorker(t, c, fmt.Sprintf("w%d", i), filepath.Join(dir, fmt.Sprintf("out-%d", i)), args))
	}
	time.Sleep(1500 * time.Millisecond)
	if err := ws[0].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-ws[0].done
	ws[0] = startWorker(t, c, "w0", filepath.Join(dir, "out-0"), args)
	if during != nil {
		during()
	}
	var out []byte
	for i, w := range ws {
		select {
		case err := <-w.done:
			if err != nil {
				t.Fatalf("worker %d: %v\n%s", i, err, w.stderr.String())
			}
		case <-time.After(3 * time.Minute):
			t.Fatalf("worker %d still running after 3 minutes:\n%s", i, w.stderr.String())
		}
	}
	for i := range 3 {
		b, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("out-%d", i)))
		out = append(out, b...)
	}
	return out
}

func fleetArgs(ep []string, src, to, job, coordinator string) []string {
	return append(append([]string(nil), ep...), "backfill", src, "--to", to, "--job", job, "--coordinator", coordinator,
		"--lease-ttl", "3s", "--commit-interval", "200ms", "--poll-interval", "100ms", "--max-in-flight", "2",
		"--read-concurrency", "2", "--split-max-objects", "25", "--log-level", "warn")
}

// Three workers over NATS, standard output: one worker SIGKILLed and restarted, one NATS
// node SIGKILLed and restarted; every record arrives at least once.
func TestE2EBackfillFleetNATSStdout(t *testing.T) {
	c, ep := minioCLI(t)
	cluster := testenv.NATS(t)
	srv := testenv.MinIO(t)
	bucket := randomBucket(t)
	s, err := store.Open(context.Background(), "s3://"+bucket, srv.StoreConfig(t))
	if err != nil || s.MakeBucket(context.Background()) != nil {
		t.Fatal(err)
	}
	want := uploadCorpus(t, s, "logs/", fleetObjects)
	args := fleetArgs(ep, "s3://"+bucket+"/logs/", "-", "fleet-nats-"+bucket[len(bucket)-6:], cluster.URL())
	out := runFleet(t, c, args, func() {
		restart := cluster.KillNode(t, 2)
		time.Sleep(time.Second)
		restart()
	})
	got := map[[32]byte]int{}
	countRecords(got, out)
	for h, n := range want {
		if got[h] < n {
			t.Fatalf("a record written %d times was delivered %d times (%d distinct records out of %d)", n, got[h], len(got), len(want))
		}
	}
	for h := range got {
		if want[h] == 0 {
			t.Fatal("a record that was never written was delivered")
		}
	}
}

// Three workers with the bucket coordinator into a store: one worker SIGKILLed and
// restarted; every record lands exactly once, and `wharf validate` certifies the output.
func TestE2EBackfillFleetBucketStore(t *testing.T) {
	c, ep := minioCLI(t)
	srv := testenv.MinIO(t)
	bucket := randomBucket(t)
	s, err := store.Open(context.Background(), "s3://"+bucket, srv.StoreConfig(t))
	if err != nil || s.MakeBucket(context.Background()) != nil {
		t.Fatal(err)
	}
	want := uploadCorpus(t, s, "logs/", fleetObjects)
	dst := "s3://" + bucket + "/out/"
	out := runFleet(t, c, fleetArgs(ep, "s3://"+bucket+"/logs/", dst, "fleet-bucket", "bucket"), nil)
	if n := strings.Count(string(out), ": succeeded;"); n < 3 {
		t.Fatalf("%d workers said the job succeeded, want every one of the last three:\n%s", n, out)
	}
	c.run(t, append(ep, "validate", "--deep", dst)...).must(t, 0)
	v, err := export.Validate(context.Background(), s.Sub("out"), dst, false)
	if err != nil || !v.Certified {
		t.Fatalf("validate: %v %+v", err, v)
	}
	got := map[[32]byte]int{}
	var rows int64
	for _, p := range v.Manifest.Parts {
		obj, err := s.Sub("out").Get(context.Background(), p.Key, nil)
		if err != nil {
			t.Fatal(err)
		}
		dec, _ := zstd.NewReader(obj)
		b, err := io.ReadAll(dec)
		dec.Close()
		obj.Close()
		if err != nil {
			t.Fatal(err)
		}
		countRecords(got, b)
		rows += p.Rows
	}
	total := 0
	for h, n := range want {
		total += n
		if got[h] != n {
			t.Fatalf("a record written %d times is in the output %d times", n, got[h])
		}
	}
	if rows != int64(total) || len(got) != len(want) {
		t.Fatalf("manifest rows %d, distinct records %d; want %d rows, %d distinct", rows, len(got), total, len(want))
	}
	r := c.run(t, append(ep, "backfill", "status", "--job", "fleet-bucket", "s3://"+bucket+"/logs/")...).must(t, 0)
	if !strings.Contains(r.out, "succeeded") || !strings.Contains(r.out, "0 quarantined") {
		t.Fatalf("status:\n%s", r.out)
	}
}
