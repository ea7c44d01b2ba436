package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/ship"
	"github.com/wharfdata/wharf/spool"
	"github.com/wharfdata/wharf/store"
)

// shipDest is a destination the end-to-end ship tests use, with the test's own handle on it.
type shipDest struct {
	name  string
	c     cli          // the environment wharf runs with (credentials)
	args  []string     // global flags (--endpoint)
	url   string       // --to
	st    *store.Store // the destination, opened by the test
	large bool         // ship files large enough for multipart uploads
}

func fileShipDest(t *testing.T) shipDest {
	dir := filepath.Join(t.TempDir(), "bucket")
	must(t, os.Mkdir(dir, 0o755))
	url := "file://" + dir
	st, err := store.Open(context.Background(), url, nil)
	must(t, err)
	t.Cleanup(func() { st.Close() })
	return shipDest{name: "file", url: url, st: st}
}

func minioShipDest(t *testing.T) shipDest {
	c, ep := minioCLI(t)
	srv := testenv.MinIO(t)
	url := "s3://" + randomBucket(t) + "/landing"
	st, err := store.Open(context.Background(), url, srv.StoreConfig(t))
	must(t, err)
	must(t, st.MakeBucket(context.Background()))
	t.Cleanup(func() { st.Close() })
	return shipDest{name: "minio", c: c, args: ep, url: url, st: st, large: true}
}

// shipSpool is a spool whose files' content the test knows.
type shipSpool struct {
	dir   string
	epoch uint64
	files []spool.File
	data  map[uint64][]byte
}

func newShipSpool(t *testing.T, rng *rand.Rand, sizes []int) *shipSpool {
	t.Helper()
	sp := &shipSpool{dir: filepath.Join(t.TempDir(), "spool"), data: map[uint64][]byte{}}
	info, err := spool.Init(sp.dir)
	must(t, err)
	sp.epoch = info.Epoch
	src := t.TempDir()
	for i, n := range sizes {
		b := make([]byte, n)
		for j := 0; j < n; j += 8 {
			v := rng.Uint64()
			for k := 0; k < 8 && j+k < n; k++ {
				b[j+k] = byte(v >> (8 * k))
			}
		}
		p := filepath.Join(src, fmt.Sprintf("part-%d.ndjson", i))
		must(t, os.WriteFile(p, b, 0o644))
		f, err := spool.Add(context.Background(), sp.dir, p, spool.AddOptions{Dataset: []string{"events", "metrics"}[i%2],
			Time: time.Date(2026, 11, 29, 10+i, 0, 0, 0, time.UTC), Records: uint64(1 + i), Clock: spool.ClockSynced})
		must(t, err)
		sp.files = append(sp.files, f)
		sp.data[f.ID] = b
	}
	return sp
}

func (sp *shipSpool) key(f spool.File) string { return ship.ObjectKey("edge", "gw-1", sp.epoch, f) }

// shipArgs are the arguments of `wharf ship` for sp to d: small parts and a low threshold so
// that 17 MiB goes multipart, fast polls and retries, no HTTP endpoints.
func (d shipDest) shipArgs(sp *shipSpool, extra ...string) []string {
	args := append(slices.Clone(d.args), "ship", "--spool", sp.dir, "--to", d.url, "--pipeline", "edge", "--node", "gw-1",
		"--listen", "off", "--part-size", "5MiB", "--multipart-threshold", "5MiB", "--poll-interval", "20ms",
		"--retry-initial", "20ms", "--retry-max", "200ms", "--log-level", "warn")
	return append(args, extra...)
}

// checkObject checks f's object: its bytes and metadata.
func (d shipDest) checkObject(t *testing.T, sp *shipSpool, f spool.File) {
	t.Helper()
	key := sp.key(f)
	obj, err := d.st.Get(context.Background(), key, nil)
	if err != nil {
		t.Errorf("file %d: %v", f.ID, err)
		return
	}
	defer obj.Close()
	got, err := io.ReadAll(obj)
	if err != nil || !bytes.Equal(got, sp.data[f.ID]) {
		t.Errorf("file %d at %s: %d bytes (%v), want its %d bytes", f.ID, key, len(got), err, len(sp.data[f.ID]))
	}
	for k, v := range ship.Metadata("gw-1", f) {
		if obj.Info.Metadata[k] != v {
			t.Errorf("file %d: metadata %s = %q, want %q", f.ID, k, obj.Info.Metadata[k], v)
		}
	}
}

// checkAfterKill checks what a killed service left: every file missing locally was recorded
// uploaded first, and its object is in the store.
func (d shipDest) checkAfterKill(t *testing.T, sp *shipSpool) {
	t.Helper()
	s, err := spool.Open(sp.dir, spool.OpenOptions{}) // fails if a waiting file is missing
	if err != nil {
		t.Fatalf("after the kill: %v", err)
	}
	defer s.Close()
	for _, f := range sp.files {
		if _, err := os.Stat(f.Path); !errors.Is(err, os.ErrNotExist) {
			continue
		}
		if g, ok := s.Get(f.ID); ok && g.State != spool.Uploaded {
			t.Errorf("file %d was deleted locally while the spool records it %s", f.ID, g.State)
		}
		d.checkObject(t, sp, f)
	}
}

// checkShipped checks the end state: each file's object exactly once, with its bytes and
// metadata, nothing else under wharf/, and a catalog that records every upload.
func (d shipDest) checkShipped(t *testing.T, sp *shipSpool, keep bool) {
	t.Helper()
	var want []string
	for _, f := range sp.files {
		want = append(want, sp.key(f))
		d.checkObject(t, sp, f)
	}
	objs, err := d.st.ListAll(context.Background(), "wharf/")
	must(t, err)
	var got []string
	for _, o := range objs {
		got = append(got, o.Key)
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("objects under wharf/:\n%s\nwant exactly:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	s, err := spool.Open(sp.dir, spool.OpenOptions{})
	must(t, err)
	defer s.Close()
	if p := s.Pending(); len(p) != 0 {
		t.Errorf("%d file(s) still waiting after a drain", len(p))
	}
	n := len(sp.files)
	if !keep {
		if st := s.Stats(); st.Deleted.Files != int64(n) {
			t.Errorf("spool stats %+v, want %d deleted", st, n)
		}
		return
	}
	ret := s.Retained()
	if len(ret) != n {
		t.Fatalf("%d retained, want %d", len(ret), n)
	}
	for _, f := range ret {
		if f.Key != d.url+"/"+sp.key(f) || (f.Outcome != ship.OutcomeOK && f.Outcome != ship.OutcomeConflictEqual) {
			t.Errorf("file %d recorded at %q with outcome %q; want %s/%s", f.ID, f.Key, f.Outcome, d.url, sp.key(f))
		}
		if _, err := os.Stat(f.Path); err != nil {
			t.Errorf("file %d removed with retention keep: %v", f.ID, err)
		}
	}
}

// A shipKill aims a SIGKILL at `wharf ship`: the test hook's spec, or a delay after which the
// test kills it.
type shipKill struct {
	name  string
	large bool // the spool gets a 17 MiB file (multipart) where the destination allows
	aim   func(rng *rand.Rand, files int) (hook string, after time.Duration)
}

var shipKills = []shipKill{
	{"between the upload and its record", false, func(rng *rand.Rand, n int) (string, time.Duration) {
		return fmt.Sprintf("kill-after-put:%d", 1+rng.IntN(n)), 0
	}},
	{"between the record and local retention", false, func(rng *rand.Rand, n int) (string, time.Duration) {
		return fmt.Sprintf("kill-after-record:%d", 1+rng.IntN(n)), 0
	}},
	{"in the middle of an upload's body", true, func(rng *rand.Rand, _ int) (string, time.Duration) {
		// Past the first 5 MiB part of the 17 MiB file on MinIO; on the file store, the first
		// read of the first body, mid-write of its temporary file.
		return fmt.Sprintf("kill-mid-body:%d", 5<<20+1+rng.IntN(5<<20)), 0
	}},
	{"at a random time, uploads paced", true, func(rng *rand.Rand, _ int) (string, time.Duration) {
		return "pause:3ms", time.Duration(20+rng.IntN(300)) * time.Millisecond
	}},
	{"at a random time", false, func(rng *rand.Rand, _ int) (string, time.Duration) {
		return "", time.Duration(rng.IntN(400)) * time.Millisecond
	}},
}

// TestE2EShipCrashFile and TestE2EShipCrashMinIO kill `wharf ship` with SIGKILL, 20 seeds
// each, at aimed points and random times, then restart it with --drain and check: every file
// in the store exactly once with its bytes and metadata, the catalog agreeing, and no file
// deleted locally before its upload was recorded.
func TestE2EShipCrashFile(t *testing.T) { shipCrash(t, fileShipDest) }

func TestE2EShipCrashMinIO(t *testing.T) { shipCrash(t, minioShipDest) }

func shipCrash(t *testing.T, dest func(*testing.T) shipDest) {
	if testing.Short() {
		t.Skip("the crash test takes ~15 s")
	}
	seen := map[string]int{}
	for seed := range 20 {
		t.Run(fmt.Sprintf("seed%02d", seed), func(t *testing.T) {
			seen[shipCrashOnce(t, dest(t), uint64(seed))]++
		})
	}
	for k, n := range seen {
		t.Logf("%2d run(s): %s", n, k)
	}
	if len(seen) == 0 && !t.Failed() {
		t.Skip("every seed was skipped: no destination to ship to")
	}
	for _, k := range shipKills[:2] {
		if seen["killed "+k.name] == 0 {
			t.Errorf("no kill landed %s", k.name)
		}
	}
}

func shipCrashOnce(t *testing.T, d shipDest, seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, 0x5417))
	kill := shipKills[int(seed)%len(shipKills)]
	sizes := make([]int, 3+rng.IntN(3))
	for i := range sizes {
		sizes[i] = 1 + rng.IntN(48<<10)
	}
	if kill.large && d.large {
		sizes[rng.IntN(len(sizes))] = 17 << 20
	} else if strings.HasPrefix(kill.name, "in the middle") {
		kill.aim = func(*rand.Rand, int) (string, time.Duration) { return "kill-mid-body:1", 0 }
	}
	sp := newShipSpool(t, rng, sizes)
	keep := seed%2 == 1
	retention := []string{"--retention", "delete_after_upload"}
	if keep {
		retention = []string{"--retention", "keep"}
	}
	hook, after := kill.aim(rng, len(sizes))
	c := d.c
	c.env = append(slices.Clone(c.env), envTestShip+"="+hook)
	cmd := c.command(d.shipArgs(sp, append(retention, "--drain")...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	must(t, cmd.Start())
	state := "killed " + kill.name
	if after > 0 || hook == "" {
		time.Sleep(after)
		_ = cmd.Process.Kill()
	}
	waitKilled(t, cmd)
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		state = fmt.Sprintf("exited %d before the kill (%s)", cmd.ProcessState.ExitCode(), kill.name)
		if cmd.ProcessState.ExitCode() != 0 {
			t.Fatalf("%s: exit %d\nstderr: %s", kill.name, cmd.ProcessState.ExitCode(), stderr.String())
		}
	}
	d.checkAfterKill(t, sp)
	r := d.c.run(t, d.shipArgs(sp, append(retention, "--drain")...)...)
	if r.code != 0 {
		t.Fatalf("restart after a kill %s: exit %d\nstderr: %s", kill.name, r.code, r.err)
	}
	d.checkShipped(t, sp, keep)
	return state
}

func waitKilled(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatal("wharf ship neither exited nor was killed within 30 s")
	}
}

// TestE2EShipSIGTERM: SIGTERM lets the upload in flight finish and exits 0; the files not
// started stay waiting, and a restart ships them. Past the grace period the upload in flight
// is cancelled, with exit 0 all the same.
func TestE2EShipSIGTERM(t *testing.T) {
	d := fileShipDest(t)
	rng := rand.New(rand.NewPCG(1, 2))
	sp := newShipSpool(t, rng, []int{1 << 20, 1 << 20, 1 << 20})
	port := testenv.FreeLoopbackPort(t)
	c := d.c
	c.env = append(c.env, envTestShip+"=pause:60ms") // ~1 s per 1 MiB upload (256 KiB reads)
	args := d.shipArgs(sp, "--listen", fmt.Sprintf("127.0.0.1:%d", port), "--upload-concurrency", "1", "--log-level", "info")
	cmd := c.command(args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	must(t, cmd.Start())
	waitStatus(t, port, `"in_flight": 1`)
	must(t, cmd.Process.Signal(syscall.SIGTERM))
	waitKilled(t, cmd)
	if code := cmd.ProcessState.ExitCode(); code != 0 || !strings.Contains(stderr.String(), "stopping") {
		t.Fatalf("exit %d after SIGTERM, want 0\nstderr: %s", code, stderr.String())
	}
	s, err := spool.Open(sp.dir, spool.OpenOptions{})
	must(t, err)
	pending := len(s.Pending())
	s.Close()
	if pending != 2 {
		t.Errorf("%d files waiting after SIGTERM, want 2 (the one in flight finished, no other started)", pending)
	}
	d.checkObject(t, sp, sp.files[0])

	// Past the grace: cancelled, exit 0, the file still waiting and nothing half-written.
	c.env = append(d.c.env, envTestShip+"=pause:1s")
	cmd = c.command(append(args, "--grace", "100ms")...)
	stderr.Reset()
	cmd.Stderr = &stderr
	must(t, cmd.Start())
	waitStatus(t, port, `"in_flight": 1`)
	must(t, cmd.Process.Signal(syscall.SIGTERM))
	waitKilled(t, cmd)
	if code := cmd.ProcessState.ExitCode(); code != 0 || !strings.Contains(stderr.String(), "grace period over") {
		t.Fatalf("exit %d after SIGTERM past the grace, want 0\nstderr: %s", code, stderr.String())
	}
	if _, err := d.st.Head(context.Background(), sp.key(sp.files[1])); !errors.Is(err, store.ErrNotExist) {
		t.Errorf("the cancelled upload left an object: %v", err)
	}
	d.c.run(t, d.shipArgs(sp, "--drain")...).must(t, 0)
	d.checkShipped(t, sp, false)
}

// waitStatus polls /status on port until its body contains want.
func waitStatus(t *testing.T, port int, want string) {
	t.Helper()
	url := fmt.Sprintf("http://127.0.0.1:%d/status", port)
	var last string
	ok := waitUntil(func() bool {
		resp, err := httpGet(url)
		last = resp
		return err == nil && strings.Contains(resp, want)
	})
	if !ok {
		t.Fatalf("/status never said %s; last: %s", want, last)
	}
}

// TestE2EShipCollision: the binary stops with WHARF_OBJECT_KEY_COLLISION, exit 1, naming the
// file and the key, and leaves the object and the file as they were.
func TestE2EShipCollision(t *testing.T) {
	d := fileShipDest(t)
	sp := newShipSpool(t, rand.New(rand.NewPCG(3, 4)), []int{100})
	key := sp.key(sp.files[0])
	_, err := d.st.Put(context.Background(), key, strings.NewReader("not this"), &store.PutOptions{Size: 8})
	must(t, err)
	r := d.c.run(t, d.shipArgs(sp, "--drain")...)
	if r.code != 1 || !strings.Contains(r.err, "[WHARF_OBJECT_KEY_COLLISION]") || !strings.Contains(r.err, key) ||
		!strings.Contains(r.err, sp.files[0].Path) || !strings.Contains(r.err, "node id") {
		t.Fatalf("exit %d, stderr %s; want exit 1 and WHARF_OBJECT_KEY_COLLISION naming the file and the key", r.code, r.err)
	}
	if _, err := os.Stat(sp.files[0].Path); err != nil {
		t.Errorf("the file was removed: %v", err)
	}
}

func httpGet(url string) (string, error) {
	client := &http.Client{Timeout: 2 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// A destination bucket that does not exist stops the service at once with
// WHARF_BUCKET_MISSING naming it (waiting would not make it appear), and nothing is deleted.
func TestE2EShipBucketMissing(t *testing.T) {
	d := fileShipDest(t)
	d.url += "-missing"
	sp := newShipSpool(t, rand.New(rand.NewPCG(5, 6)), []int{100})
	r := d.c.run(t, d.shipArgs(sp)...)
	if r.code != 1 || !strings.Contains(r.err, "[WHARF_BUCKET_MISSING]") || !strings.Contains(r.err, "bucket-missing") ||
		!strings.Contains(r.err, "wharf mb") {
		t.Fatalf("exit %d, stderr %s; want exit 1 and WHARF_BUCKET_MISSING naming the bucket and how to make it", r.code, r.err)
	}
	if _, err := os.Stat(sp.files[0].Path); err != nil {
		t.Errorf("the file was removed: %v", err)
	}
}
