package main

import (
	"bytes"
	"context"
	"fmt"
	"hash/maphash"
	"io"
	"math/rand/v2"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"golang.org/x/sync/errgroup"

	"github.com/wharfdata/wharf/backfill"
	"github.com/wharfdata/wharf/cas/natskv"
	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
)

// The fleet tests read fleetObjects objects, in turn plain, gzip, gzip of two members, zstd
// and zstd of two frames: about 1 GiB of NDJSON records, made once per test run from fixed
// seeds. Every record is unique (its object and index lead it) and ends in a run of one
// letter. The zstd objects of two frames hold nearly all of the bytes (fleetBigBytes each):
// their first frame is fleetSmallBytes of records compressed by the zstd encoder, their second
// the rest as raw and RLE blocks written here (rleFrame), because compressing a GiB in a test
// binary built with -race takes minutes. The other objects hold fleetSmallBytes each, really
// compressed. MinIO stores and serves a few MB; the workers decompress, frame and deliver the
// whole GiB.
const (
	fleetObjects    = 2000
	fleetBigBytes   = 2600 << 10
	fleetSmallBytes = 16 << 10
)

var fleetKinds = []string{"plain", "gz", "gzmulti", "zst", "zstmulti"}
var fleetExts = map[string]string{"plain": ".ndjson", "gz": ".ndjson.gz", "gzmulti": ".log.gz", "zst": ".ndjson.zst", "zstmulti": ".zst"}

// fleetCorpus is the objects and how many times each record (by recordHash) is in them.
type fleetCorpus struct {
	keys    []string // below the prefix
	bodies  [][]byte // as stored
	want    map[uint64]int
	records int64
	bytes   int64 // of records, newlines included
}

var (
	fleetOnce sync.Once
	fleet     *fleetCorpus
	hashSeed  = maphash.MakeSeed()
)

// recordHash identifies a record (a line without its '\n'), given in parts.
func recordHash(parts ...[]byte) uint64 {
	var h maphash.Hash
	h.SetSeed(hashSeed)
	for _, p := range parts {
		h.Write(p)
	}
	return h.Sum64()
}

// corpus returns the fleet corpus, made on the first call.
func corpus(t *testing.T) *fleetCorpus {
	t.Helper()
	fleetOnce.Do(func() {
		start := time.Now()
		fleet = makeCorpus()
		t.Logf("fleet corpus: %d objects, %d records, %.1f MiB of records, %.1f MiB stored (%s to make)",
			len(fleet.keys), fleet.records, float64(fleet.bytes)/(1<<20), float64(fleet.stored())/(1<<20), time.Since(start).Round(time.Millisecond))
	})
	return fleet
}

func (c *fleetCorpus) stored() (n int64) {
	for _, b := range c.bodies {
		n += int64(len(b))
	}
	return n
}

func makeCorpus() *fleetCorpus {
	c := &fleetCorpus{keys: make([]string, fleetObjects), bodies: make([][]byte, fleetObjects), want: map[uint64]int{}}
	hashes := make([][]uint64, fleetObjects)
	sizes := make([]int64, fleetObjects)
	var g errgroup.Group
	workers := runtime.GOMAXPROCS(0)
	for w := range workers {
		g.Go(func() error {
			enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
			if err != nil {
				return err
			}
			zw, err := gzip.NewWriterLevel(nil, gzip.BestSpeed)
			if err != nil {
				return err
			}
			for i := w; i < fleetObjects; i += workers {
				kind := fleetKinds[i%len(fleetKinds)]
				c.keys[i] = fmt.Sprintf("obj-%05d%s", i, fleetExts[kind])
				c.bodies[i], hashes[i], sizes[i] = makeFleetObject(enc, zw, i, kind)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		panic(err)
	}
	for i := range hashes {
		for _, h := range hashes[i] {
			c.want[h]++
		}
		c.records += int64(len(hashes[i]))
		c.bytes += sizes[i]
	}
	return c
}

// fleetRuns holds, for each letter, the longest run of it that pads a record.
var fleetRuns = func() (runs [26][]byte) {
	for c := range runs {
		runs[c] = bytes.Repeat([]byte{byte('a' + c)}, 32<<10)
	}
	return runs
}()

// makeFleetObject makes object i of kind: its bytes as stored, its records' hashes and how
// many bytes of records it holds. A record is its object and index, its kind, and a run of
// one letter: up to 2 KiB in the objects' first fleetSmallBytes, up to 32 KiB after.
func makeFleetObject(enc *zstd.Encoder, zw *gzip.Writer, i int, kind string) (stored []byte, hashes []uint64, size int64) {
	rng := rand.New(rand.NewPCG(7, uint64(i)))
	small := make([]byte, 0, fleetSmallBytes+4<<10)
	var big rleFrame
	var rec []byte
	for r := 0; ; r++ {
		n := rng.IntN(2 << 10)
		if len(small) >= fleetSmallBytes {
			if kind != "zstmulti" || size >= fleetBigBytes {
				break
			}
			n = rng.IntN(32 << 10)
		}
		rec = append(rec[:0], `{"object":`...)
		rec = strconv.AppendInt(rec, int64(i), 10)
		rec = append(rec, `,"record":`...)
		rec = strconv.AppendInt(rec, int64(r), 10)
		rec = append(rec, `,"kind":"`...)
		rec = append(rec, kind...)
		rec = append(rec, `","msg":"`...)
		letter := (i + r) % 26
		run, tail := fleetRuns[letter][:n], []byte("\"}\n")
		hashes = append(hashes, recordHash(rec, run, tail[:2]))
		size += int64(len(rec) + n + len(tail))
		if len(small) < fleetSmallBytes {
			small = append(append(append(small, rec...), run...), tail...)
			continue
		}
		big.raw(rec)
		big.run(byte('a'+letter), n)
		big.raw(tail)
	}
	var out bytes.Buffer
	switch kind {
	case "plain":
		out.Write(small)
	case "gz", "gzmulti":
		parts := [][]byte{small}
		if kind == "gzmulti" {
			cut := bytes.IndexByte(small[len(small)/2:], '\n') + len(small)/2 + 1
			parts = [][]byte{small[:cut], small[cut:]}
		}
		for _, p := range parts {
			zw.Reset(&out)
			zw.Write(p)
			zw.Close()
		}
	case "zst":
		out.Write(enc.EncodeAll(small, nil))
	case "zstmulti":
		out.Write(enc.EncodeAll(small, nil))
		out.Write(big.frame())
	}
	return out.Bytes(), hashes, size
}

// rleFrame builds a zstd frame (RFC 8878) of raw and RLE blocks, without a checksum.
type rleFrame struct {
	blocks  []byte
	pending []byte // raw bytes not yet in a block
}

const zstdMaxBlock = 128 << 10 // the frame's window is 128 KiB

func (f *rleFrame) block(typ int, size int, content []byte) {
	v := typ<<1 | size<<3
	f.blocks = append(f.blocks, byte(v), byte(v>>8), byte(v>>16))
	f.blocks = append(f.blocks, content...)
}

func (f *rleFrame) flush() {
	for p := f.pending; len(p) > 0; {
		n := min(len(p), zstdMaxBlock)
		f.block(0, n, p[:n])
		p = p[n:]
	}
	f.pending = f.pending[:0]
}

// raw adds bytes as they are.
func (f *rleFrame) raw(b []byte) { f.pending = append(f.pending, b...) }

// run adds n times c: an RLE block when it is long enough to be worth one.
func (f *rleFrame) run(c byte, n int) {
	if n < 16 {
		f.raw(fleetRuns[c-'a'][:n])
		return
	}
	f.flush()
	for n > 0 {
		k := min(n, zstdMaxBlock)
		f.block(1, k, []byte{c})
		n -= k
	}
}

// frame returns the frame: magic, a header with a 128 KiB window and no content size, the
// blocks, the last one marked.
func (f *rleFrame) frame() []byte {
	f.flush()
	f.block(0, 0, nil) // an empty last block
	b := f.blocks
	b[len(b)-3] |= 1
	return append([]byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 7 << 3}, b...)
}

// upload writes the corpus under prefix.
func (c *fleetCorpus) upload(t *testing.T, s *store.Store, prefix string) {
	t.Helper()
	g := new(errgroup.Group)
	g.SetLimit(32)
	for i, b := range c.bodies {
		g.Go(func() error {
			_, err := s.Put(context.Background(), prefix+c.keys[i], bytes.NewReader(b), &store.PutOptions{Size: int64(len(b))})
			return err
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
}

// recordCounter takes NDJSON as it is written and counts each line by its recordHash, without
// keeping it; lines that are no record (a worker's summary) are kept apart. A line left
// unfinished (torn > 0) is the torn last write of a killed worker.
type recordCounter struct {
	mu    sync.Mutex
	got   map[uint64]int
	other bytes.Buffer
	h     maphash.Hash
	line  []byte // the line's first bytes, all of them when it is no record
	torn  int    // bytes of the unfinished line
}

var recordPrefix = []byte(`{"object":`)

// keep keeps the line's first bytes until they tell whether it is a record, and the whole
// of a line that is not.
func (r *recordCounter) keep(seg []byte) {
	if len(r.line) < len(recordPrefix) {
		k := min(len(seg), len(recordPrefix)-len(r.line))
		r.line, seg = append(r.line, seg[:k]...), seg[k:]
		if len(r.line) < len(recordPrefix) {
			return
		}
	}
	if !bytes.Equal(r.line[:len(recordPrefix)], recordPrefix) {
		r.line = append(r.line, seg...)
	}
}

func newRecordCounter() *recordCounter {
	r := &recordCounter{got: map[uint64]int{}}
	r.h.SetSeed(hashSeed)
	return r
}

func (r *recordCounter) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		seg := p
		if i >= 0 {
			seg = p[:i]
		}
		r.h.Write(seg)
		r.keep(seg)
		r.torn += len(seg)
		if i < 0 {
			break
		}
		if bytes.HasPrefix(r.line, recordPrefix) {
			r.got[r.h.Sum64()]++
		} else {
			r.other.Write(r.line)
			r.other.WriteByte('\n')
		}
		r.h.Reset()
		r.line, r.torn, p = r.line[:0], 0, p[i+1:]
	}
	return n, nil
}

// check compares what the counters took with the corpus: every record at least once, or
// with exactly, exactly as often as it was written; nothing else.
func (c *fleetCorpus) check(t *testing.T, exactly bool, counters ...*recordCounter) {
	t.Helper()
	got := map[uint64]int{}
	for _, r := range counters {
		for h, n := range r.got {
			got[h] += n
		}
	}
	var delivered int64
	for h, n := range got {
		if c.want[h] == 0 {
			t.Fatalf("%d records that were never written were delivered", n)
		}
		delivered += int64(n)
	}
	for h, n := range c.want {
		if got[h] < n || exactly && got[h] != n {
			t.Fatalf("a record written %d times was delivered %d times (%d distinct records out of %d, exactly: %v)", n, got[h], len(got), len(c.want), exactly)
		}
	}
	t.Logf("%d records delivered for %d written (%.1f MiB)", delivered, c.records, float64(c.bytes)/(1<<20))
}

// worker is one running `wharf backfill` process.
type worker struct {
	cmd    *exec.Cmd
	out    *recordCounter
	stderr bytes.Buffer
	done   chan error
}

func startWorker(t *testing.T, c cli, node string, args []string) *worker {
	t.Helper()
	c.env = append(append([]string(nil), c.env...), "WHARF_NODE_ID="+node, "WHARF_TEST_BACKFILL_PAUSE=15ms")
	w := &worker{cmd: c.command(args...), out: newRecordCounter(), done: make(chan error, 1)}
	w.cmd.Stdout, w.cmd.Stderr = w.out, &w.stderr
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { w.done <- w.cmd.Wait() }()
	t.Cleanup(func() {
		if w.cmd.ProcessState == nil {
			_ = w.cmd.Process.Kill()
			<-w.done
		}
	})
	return w
}

// runFleet runs three workers of one job, SIGKILLs one in the middle and starts it again, and
// calls during while they run (another fault). Every worker but the killed one must exit 0
// having written whole lines. It returns what each worker wrote to standard output.
func runFleet(t *testing.T, c cli, args []string, during func()) []*recordCounter {
	t.Helper()
	var ws []*worker
	for i := range 3 {
		ws = append(ws, startWorker(t, c, fmt.Sprintf("w%d", i), args))
	}
	time.Sleep(1500 * time.Millisecond)
	if err := ws[0].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-ws[0].done
	outs := []*recordCounter{ws[0].out}
	ws[0] = startWorker(t, c, "w0", args)
	if during != nil {
		during()
	}
	for i, w := range ws {
		select {
		case err := <-w.done:
			if err != nil {
				t.Fatalf("worker %d: %v\n%s", i, err, w.stderr.String())
			}
		case <-time.After(3 * time.Minute):
			t.Fatalf("worker %d still running after 3 minutes:\n%s", i, w.stderr.String())
		}
		if w.out.torn > 0 {
			t.Fatalf("worker %d exited 0 with a last line of %d bytes that has no newline", i, w.out.torn)
		}
		outs = append(outs, w.out)
	}
	return outs
}

func fleetArgs(ep []string, src, to, job, coordinator string) []string {
	return append(append([]string(nil), ep...), "backfill", src, "--to", to, "--job", job, "--coordinator", coordinator,
		"--lease-ttl", "3s", "--commit-interval", "200ms", "--poll-interval", "100ms", "--max-in-flight", "2",
		"--read-concurrency", "2", "--split-max-objects", "25", "--log-level", "warn")
}

// fleetSource is the MinIO bucket that holds the corpus under logs/, shared by the fleet tests
// that run at once (they are parallel): the first makes and fills it, the last to end removes
// it.
var fleetSource struct {
	mu     sync.Mutex
	users  int
	bucket string
}

// fleetBucket returns the shared bucket's name, a store at its root and the corpus.
func fleetBucket(t *testing.T) (*store.Store, string, *fleetCorpus) {
	t.Helper()
	srv := testenv.MinIO(t)
	fc := corpus(t)
	fs := &fleetSource
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.users == 0 {
		fs.bucket = randomBucket(t)
	}
	s, err := store.Open(context.Background(), "s3://"+fs.bucket, srv.StoreConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	if fs.users == 0 {
		if err := s.MakeBucket(context.Background()); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		fc.upload(t, s, "logs/")
		t.Logf("uploaded the corpus to %s in %s", fs.bucket, time.Since(start).Round(time.Millisecond))
	}
	fs.users++
	bucket := fs.bucket
	t.Cleanup(func() {
		fs.mu.Lock()
		defer fs.mu.Unlock()
		if fs.users--; fs.users > 0 {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := srv.RemoveBucket(ctx, bucket); err != nil {
			t.Logf("cleanup: removing bucket %s: %v", bucket, err)
		}
	})
	return s, bucket, fc
}

// Three workers over NATS (a 3-node cluster of the test's own), standard output: one worker
// SIGKILLed and restarted, one NATS node SIGKILLed and restarted; every record arrives at
// least once.
func TestE2EBackfillFleetNATSStdout(t *testing.T) {
	t.Parallel()
	c, ep := minioCLI(t)
	cluster := testenv.PrivateNATS(t)
	_, bucket, fc := fleetBucket(t)
	job := "fleet-nats-" + bucket[len(bucket)-6:]
	dropNATSJob(t, cluster, job)
	args := fleetArgs(ep, "s3://"+bucket+"/logs/", "-", job, cluster.URL())
	outs := runFleet(t, c, args, func() {
		restart := cluster.KillNode(t, 2)
		time.Sleep(time.Second)
		restart()
	})
	fc.check(t, false, outs...)
}

// Three workers with the bucket coordinator into a store: one worker SIGKILLed and
// restarted; every record lands exactly once, and `wharf validate` certifies the output.
func TestE2EBackfillFleetBucketStore(t *testing.T) {
	t.Parallel()
	c, ep := minioCLI(t)
	s, bucket, fc := fleetBucket(t)
	dst := "s3://" + bucket + "/out/"
	outs := runFleet(t, c, fleetArgs(ep, "s3://"+bucket+"/logs/", dst, "fleet-bucket", "bucket"), nil)
	var summaries string
	for _, o := range outs {
		if len(o.got) > 0 {
			t.Fatalf("a worker writing to %s wrote %d records to standard output", dst, len(o.got))
		}
		summaries += o.other.String()
	}
	if n := strings.Count(summaries, ": succeeded;"); n < 3 {
		t.Fatalf("%d workers said the job succeeded, want every one of the last three:\n%s", n, summaries)
	}
	c.run(t, append(ep, "validate", "--deep", dst)...).must(t, 0)
	v, err := dataset.Validate(context.Background(), s.Sub("out"), dst, false)
	if err != nil || !v.Certified {
		t.Fatalf("validate: %v %+v", err, v)
	}
	parts := newRecordCounter()
	var rows int64
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	for _, p := range v.Manifest.Parts {
		obj, err := s.Sub("out").Get(context.Background(), p.Key, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = dec.Reset(obj)
		if err == nil {
			_, err = io.Copy(parts, dec)
		}
		obj.Close()
		if err != nil {
			t.Fatal(err)
		}
		rows += p.Rows
	}
	if parts.torn > 0 || parts.other.Len() > 0 {
		t.Fatalf("the parts hold lines that are no record: %q", parts.other.String())
	}
	fc.check(t, true, parts)
	if rows != fc.records {
		t.Fatalf("manifest rows %d, want %d", rows, fc.records)
	}
	r := c.run(t, append(ep, "backfill", "status", "--job", "fleet-bucket", "s3://"+bucket+"/logs/")...).must(t, 0)
	if !strings.Contains(r.out, "succeeded") || !strings.Contains(r.out, "0 quarantined") {
		t.Fatalf("status:\n%s", r.out)
	}
}

// dropNATSJob deletes job's key-value bucket on cluster when t ends.
func dropNATSJob(t *testing.T, cluster testenv.NATSCluster, job string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if k, err := natskv.Open(ctx, natskv.Options{Servers: cluster.URL(), Bucket: backfill.NATSBucket(job)}); err == nil {
			_ = k.DeleteBucket(ctx)
			k.Close()
		}
	})
}
