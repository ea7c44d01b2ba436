package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/ship"
	"github.com/wharfdata/wharf/store"
)

// closedEndpoint is an http://127.0.0.1:PORT endpoint nothing listens on: a store that is down.
func closedEndpoint(t *testing.T) string {
	return fmt.Sprintf("http://127.0.0.1:%d", testenv.FreeLoopbackPort(t))
}

// checkBacklog checks that /status, /metrics and the spool agree on n files waiting.
func checkBacklog(t *testing.T, s *shipService, st ship.Status, n int) {
	t.Helper()
	if st.Backlog.Files != int64(n) || (n > 0 && st.Backlog.Bytes == 0) {
		t.Errorf("/status backlog %+v, want %d file(s)", st.Backlog, n)
	}
	_, metrics, err := s.get("/metrics")
	if want := fmt.Sprintf("wharf_spool_files{state=\"eligible\"} %d\n", n); err != nil || !strings.Contains(metrics, want) {
		t.Errorf("/metrics lacks %q (%v)", want, err)
	}
}

// TestE2EShipStoreDownAtStart: while the startup probe cannot reach the store, the service
// still tells the truth: /status and /metrics count the files waiting, last_error carries a
// code, /healthz stays 200 (an outage needs no operator), and after SIGTERM the summary gives
// the backlog.
func TestE2EShipStoreDownAtStart(t *testing.T) {
	sp := newShipSpool(t, rand.New(rand.NewPCG(14, 3)), []int{100, 200, 300})
	c := cli{env: []string{"AWS_ACCESS_KEY_ID=AKIAEXAMPLEKEY", "AWS_SECRET_ACCESS_KEY=examplesecretexample", "AWS_REGION=us-east-1"}}
	d := shipDest{c: c, args: []string{"--endpoint", closedEndpoint(t)}, url: "s3://down-bucket/raw"}
	s := startShip(t, c, d.shipArgs(sp)...)
	st := s.waitFor("the probe to fail", func(st ship.Status) bool {
		return st.State == ship.StateProbing && st.LastError != nil
	})
	if st.LastError.Code == "" {
		t.Errorf("last_error %+v: no code", st.LastError)
	}
	checkBacklog(t, s, st, 3)
	if code, body, err := s.get("/healthz"); err != nil || code != 200 || body != "ok: probing\n" {
		t.Errorf("/healthz while the store is down: %d %q (%v), want 200 ok: probing", code, body, err)
	}
	if code := s.stop(); code != 0 {
		t.Fatalf("SIGTERM while probing: exit %d, want 0\nstderr: %s", code, s.err.String())
	}
	if !strings.Contains(s.out.String(), "backlog 3 file(s), 600 B") {
		t.Errorf("exit summary %q: want the 3 files waiting", s.out.String())
	}
}

// TestE2EShipWrongSecret: with a wrong secret key the probe is refused again and again: after
// three refusals /healthz answers 503 with WHARF_FORBIDDEN and /status says unhealthy, with the
// files waiting counted; the secret appears nowhere.
func TestE2EShipWrongSecret(t *testing.T) {
	srv := testenv.MinIO(t)
	const wrong = "wrong-secret-0123456789abcdef"
	c := cli{env: []string{"AWS_ACCESS_KEY_ID=" + srv.AccessKey, "AWS_SECRET_ACCESS_KEY=" + wrong, "AWS_REGION=" + srv.Region}}
	d := shipDest{c: c, args: []string{"--endpoint", srv.Endpoint}, url: "s3://" + randomBucket(t) + "/raw"}
	sp := newShipSpool(t, rand.New(rand.NewPCG(14, 4)), []int{100, 200})
	s := startShip(t, c, d.shipArgs(sp)...)
	st := s.waitFor("the service to turn unhealthy", func(st ship.Status) bool { return st.Health == ship.HealthUnhealthy })
	if st.State != ship.StateProbing || st.LastError == nil || st.LastError.Code != "WHARF_FORBIDDEN" {
		t.Errorf("/status: state %s, last_error %+v; want probing, WHARF_FORBIDDEN", st.State, st.LastError)
	}
	checkBacklog(t, s, st, 2)
	code, body, err := s.get("/healthz")
	if err != nil || code != 503 || !strings.HasPrefix(body, "unhealthy: probing: ") || !strings.Contains(body, "[WHARF_FORBIDDEN]") {
		t.Errorf("/healthz: %d %q (%v); want 503 unhealthy: probing … [WHARF_FORBIDDEN]", code, body, err)
	}
	_, status, _ := s.get("/status")
	if code := s.stop(); code != 0 {
		t.Errorf("SIGTERM: exit %d, want 0", code)
	}
	for name, out := range map[string]string{"stdout": s.out.String(), "stderr": s.err.String(), "/status": status, "/healthz": body} {
		if strings.Contains(out, wrong) {
			t.Errorf("%s holds the secret key", name)
		}
	}
}

// TestE2EShipBacklogAfterFatal: after a fatal error the service stays up, and its backlog
// stays true: a file a producer adds meanwhile is counted; the summary at SIGTERM gives it.
func TestE2EShipBacklogAfterFatal(t *testing.T) {
	d := fileShipDest(t)
	sp := newShipSpool(t, rand.New(rand.NewPCG(14, 5)), []int{100})
	key := sp.key(sp.files[0])
	_, err := d.st.Put(context.Background(), key, strings.NewReader("not this"), &store.PutOptions{Size: 8})
	must(t, err)
	s := startShip(t, d.c, d.shipArgs(sp)...)
	st := s.waitFor("the collision", func(st ship.Status) bool { return st.Fatal != nil })
	if st.Fatal.Code != "WHARF_OBJECT_KEY_COLLISION" || st.Health != ship.HealthFatal {
		t.Errorf("fatal %+v, health %s", st.Fatal, st.Health)
	}
	checkBacklog(t, s, st, 1)
	src := filepath.Join(t.TempDir(), "late.ndjson")
	writeFiles(t, filepath.Dir(src), map[string]string{"late.ndjson": "{}\n"})
	d.c.run(t, "spool", "add", "--spool", sp.dir, "--dataset", "events", src).must(t, 0)
	st = s.waitFor("the backlog to count the file added after the fatal error", func(st ship.Status) bool { return st.Backlog.Files == 2 })
	checkBacklog(t, s, st, 2)
	if code := s.stop(); code != 1 {
		t.Errorf("SIGTERM after a fatal error: exit %d, want 1", code)
	}
	if !strings.Contains(s.out.String(), "ship: fatal after") || !strings.Contains(s.out.String(), "backlog 2 file(s)") {
		t.Errorf("exit summary %q: want fatal and the 2 files waiting", s.out.String())
	}
	if !strings.Contains(s.err.String(), "[WHARF_OBJECT_KEY_COLLISION]") {
		t.Errorf("stderr lacks the fatal error: %s", s.err.String())
	}
}

// mbHint is the command a missing-bucket error suggests.
var mbHint = regexp.MustCompile("`(wharf [^`]*mb [^`]*)`")

// TestE2EShipBucketMissingHint: the missing-bucket error names the bucket (or directory)
// alone, says how to make it once, and the command it gives works: after it, the service
// ships. On MinIO and on the folder store.
func TestE2EShipBucketMissingHint(t *testing.T) {
	for _, dest := range []func(*testing.T) shipDest{fileShipDest, minioShipDest} {
		d := dest(t)
		t.Run(d.name, func(t *testing.T) {
			sp := newShipSpool(t, rand.New(rand.NewPCG(14, 6)), []int{100})
			bucket := "s3://" + randomBucket(t)
			if d.name == "file" {
				bucket = filepath.Join(t.TempDir(), "lake")
			}
			d.url = bucket + "/raw"
			r := d.c.run(t, d.shipArgs(sp)...)
			m := mbHint.FindStringSubmatch(r.err)
			if r.code != 1 || !strings.Contains(r.err, "[WHARF_BUCKET_MISSING]") || m == nil {
				t.Fatalf("exit %d, stderr %s; want exit 1, WHARF_BUCKET_MISSING and a wharf mb command", r.code, r.err)
			}
			// S3's bucket is the bucket alone (mb refuses a prefix); a folder store's is the
			// directory given, which mb makes.
			want := bucket
			if d.name == "file" {
				want = d.url
			}
			hint := strings.Fields(m[1])
			if len(mbHint.FindAllString(r.err, -1)) != 1 || strings.Contains(r.err, "MakeBucket") || strings.Contains(r.err, "create it with") ||
				hint[len(hint)-1] != want {
				t.Errorf("stderr %q: want one hint, making %s", r.err, want)
			}
			mb := d.c.command(hint[1:]...)
			if out, err := mb.CombinedOutput(); err != nil {
				t.Fatalf("the hint %q failed: %v: %s", m[1], err, out)
			}
			if d.name == "minio" {
				st, err := store.Open(context.Background(), d.url, testenv.MinIO(t).StoreConfig(t))
				must(t, err)
				d.st = st
			} else {
				st, err := store.Open(context.Background(), d.url, nil)
				must(t, err)
				d.st = st
			}
			d.c.run(t, d.shipArgs(sp, "--drain")...).must(t, 0)
			d.checkShipped(t, sp, false)
		})
	}
}

// TestE2EShipListenInUse: a --listen port another process holds is its own error, naming the
// address and the clash, exit 1; not an invalid store configuration.
func TestE2EShipListenInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer ln.Close()
	d := fileShipDest(t)
	sp := newShipSpool(t, rand.New(rand.NewPCG(14, 7)), []int{10})
	r := d.c.run(t, d.shipArgs(sp, "--drain", "--listen", ln.Addr().String())...)
	if r.code != 1 || !strings.Contains(r.err, "[WHARF_SHIP_LISTEN_FAILED]") || !strings.Contains(r.err, ln.Addr().String()) ||
		!strings.Contains(r.err, "address already in use") || strings.Contains(r.err, "invalid store configuration") {
		t.Fatalf("exit %d, stderr %s; want exit 1 and WHARF_SHIP_LISTEN_FAILED naming %s and the clash", r.code, r.err, ln.Addr())
	}
}

// TestE2EShipHelp: `wharf ship --help` shows each flag's value type, not a word of its usage
// (pflag reads text in backticks as the value's name), and the log level ship really uses.
func TestE2EShipHelp(t *testing.T) {
	r := wharf(t, "ship", "--help").must(t, 0)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^\s+--spool string\s+the spool directory`),
		regexp.MustCompile(`(?m)^\s+--log-level string\s+.*\(default "info"\)$`),
	} {
		if !want.MatchString(r.out) {
			t.Errorf("ship --help lacks %s:\n%s", want, r.out)
		}
	}
	if strings.Contains(r.out, "`") || strings.Contains(r.out, `(default "warn")`) {
		t.Errorf("ship --help shows a backtick or the warn default:\n%s", r.out)
	}
	// The level shown is the level used: an upload is logged at info without the flag.
	d := fileShipDest(t)
	sp := newShipSpool(t, rand.New(rand.NewPCG(14, 8)), []int{10})
	args := d.shipArgs(sp, "--drain")
	i := slices.Index(args, "--log-level")
	args = slices.Delete(args, i, i+2)
	if r := d.c.run(t, args...).must(t, 0); !strings.Contains(r.err, "level=INFO msg=uploaded") {
		t.Errorf("without --log-level, no upload was logged at info:\n%s", r.err)
	}
}

// TestE2EShipRefusedConnection: a refused connection is reported as the store being
// unavailable, never as the lost answer of a conditional write. (The classification is the
// store layer's, in store/driver/retry.go.)
func TestE2EShipRefusedConnection(t *testing.T) {
	sp := newShipSpool(t, rand.New(rand.NewPCG(14, 9)), []int{10})
	c := cli{env: []string{"AWS_ACCESS_KEY_ID=AKIAEXAMPLEKEY", "AWS_SECRET_ACCESS_KEY=examplesecretexample", "AWS_REGION=us-east-1"}}
	d := shipDest{c: c, args: []string{"--endpoint", closedEndpoint(t)}, url: "s3://refused-bucket/raw"}
	s := startShip(t, c, d.shipArgs(sp)...)
	st := s.waitFor("the probe to fail", func(st ship.Status) bool { return st.LastError != nil })
	s.stop()
	if st.LastError.Code != "WHARF_UNAVAILABLE" || strings.Contains(st.LastError.Message, "outcome unknown") ||
		!strings.Contains(st.LastError.Message, "connection refused") {
		t.Errorf("last_error %+v: want WHARF_UNAVAILABLE saying the connection was refused, not outcome unknown", st.LastError)
	}
	// The same through `wharf cp --if-absent`, a conditional put.
	src := filepath.Join(t.TempDir(), "x.txt")
	writeFiles(t, filepath.Dir(src), map[string]string{"x.txt": "x"})
	r := c.run(t, append(slices.Clone(d.args), "cp", "--if-absent", src, "s3://refused-bucket/x.txt")...)
	if r.code != 1 || strings.Contains(r.err, "outcome unknown") || !strings.Contains(r.err, "[WHARF_UNAVAILABLE]") {
		t.Errorf("cp --if-absent to a refused endpoint: exit %d, stderr %s; want WHARF_UNAVAILABLE, not outcome unknown", r.code, r.err)
	}
}
