package main

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wharfdata/wharf/backfill"
	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/internal/textfmt"
	"github.com/wharfdata/wharf/ship"
	"github.com/wharfdata/wharf/store"
)

// browser is Debian's chromium, headless, kept on loopback: every host name but 127.0.0.1
// fails to resolve and every other address goes to a closed proxy port.
type browser struct {
	t   *testing.T
	bin string
}

func newBrowser(t *testing.T) *browser { return &browser{t: t, bin: testenv.Chromium(t)} }

// run runs chromium on url with extra flags: its standard output, and the console messages
// of the page (chromium logs each as a CONSOLE line on standard error).
func (b *browser) run(url string, extra ...string) (string, []string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
		"--no-default-browser-check", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-extensions", "--no-pings", "--user-data-dir=" + b.t.TempDir(),
		"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", "--proxy-server=http://127.0.0.1:9",
		"--enable-logging=stderr", "--v=0"}, extra...)
	cmd := exec.CommandContext(ctx, b.bin, append(args, url)...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		b.t.Fatalf("chromium %s: %v\n%s", url, err, lastLines(errb.String(), 20))
	}
	var console []string
	for line := range strings.SplitSeq(errb.String(), "\n") {
		if strings.Contains(line, ":CONSOLE") {
			console = append(console, line)
		}
	}
	return out.String(), console
}

// dom loads url and returns the page as the browser rendered it (its DOM, serialized), failing
// the test on any message in the page's console: the status page runs no script and loads
// nothing, so even a blocked asset would show there.
func (b *browser) dom(url string) renderedPage {
	b.t.Helper()
	out, console := b.run(url, "--dump-dom")
	if len(console) > 0 {
		b.t.Errorf("%s: the browser's console holds:\n%s", url, strings.Join(console, "\n"))
	}
	if !strings.Contains(out, "</html>") {
		b.t.Fatalf("%s: no page rendered: %q", url, out)
	}
	return renderedPage(out)
}

// screenshot saves url as rendered at a phone's width to name.png in the test's output
// directory (WHARF_TEST_OUT, else wharf-test-out in the system's temporary directory).
func (b *browser) screenshot(url, name string) {
	b.t.Helper()
	dir := os.Getenv("WHARF_TEST_OUT")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "wharf-test-out")
	}
	must(b.t, os.MkdirAll(dir, 0o755))
	path := filepath.Join(dir, name+".png")
	b.run(url, "--hide-scrollbars", "--window-size=412,2000", "--screenshot="+path)
	st, err := os.Stat(path)
	if err != nil || st.Size() < 1000 {
		b.t.Fatalf("screenshot %s: %v", path, err)
	}
	b.t.Logf("screenshot of %s: %s", url, path)
}

// renderedPage is a status page's DOM as the browser serialized it.
type renderedPage string

var (
	figurePat = regexp.MustCompile(`<[a-z0-9]+[^>]*\sdata-k="([a-z_]+)"[^>]*>([^<]*)<`)
	rowPat    = regexp.MustCompile(`(?s)<tr data-row="([^"]*)">(.*?)</tr>`)
	cellPat   = regexp.MustCompile(`(?s)<td[^>]*>(.*?)</td>`)
)

// figures are the page's data-k figures by key.
func (p renderedPage) figures() map[string]string {
	m := map[string]string{}
	for _, f := range figurePat.FindAllStringSubmatch(string(p), -1) {
		m[f[1]] = html.UnescapeString(f[2])
	}
	return m
}

// rows are the rows of the page's table key, each its cells' text.
func (p renderedPage) rows(key string) [][]string {
	s := string(p)
	i := strings.Index(s, `<table data-k="`+key+`"`)
	if i < 0 {
		return nil
	}
	s = s[i:]
	s = s[:strings.Index(s, "</table>")]
	var rows [][]string
	for _, r := range rowPat.FindAllStringSubmatch(s, -1) {
		var cells []string
		for _, c := range cellPat.FindAllStringSubmatch(r[2], -1) {
			cells = append(cells, html.UnescapeString(regexp.MustCompile(`<[^>]+>`).ReplaceAllString(c[1], "")))
		}
		rows = append(rows, cells)
	}
	return rows
}

// checkFigures compares the page's figures with want, naming every difference.
func checkFigures(t *testing.T, what string, got map[string]string, want map[string]string) {
	t.Helper()
	for k, v := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("%s: the page has no figure %s (want %q)", what, k, v)
		} else if g != v && !strings.HasPrefix(g, v+" (") { // a size also gives its binary units
			t.Errorf("%s: figure %s is %q, /status says %q", what, k, g, v)
		}
	}
}

// TestBrowserCapturesConsoleErrors: the capture the status page tests rely on sees what a
// page logs and throws; without it, "no console message" would prove nothing.
func TestBrowserCapturesConsoleErrors(t *testing.T) {
	b := newBrowser(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `<!doctype html><p data-k="x">1</p><script>console.error("wharf-test-logged"); null.f();</script>`)
	}))
	defer srv.Close()
	out, console := b.run(srv.URL, "--dump-dom")
	all := strings.Join(console, "\n")
	if !strings.Contains(all, "wharf-test-logged") || !strings.Contains(all, "Uncaught TypeError") {
		t.Fatalf("the console capture missed a logged error and an uncaught one:\n%s", all)
	}
	if renderedPage(out).figures()["x"] != "1" {
		t.Fatalf("the DOM dump lacks the page's figure: %q", out)
	}
}

// TestE2EStatusPageShipInBrowser: a running ship whose last file collides with another
// machine's object: the page chromium renders gives the figures /status gives at that moment,
// the fatal error with its code and remedy, and nothing in the console.
func TestE2EStatusPageShipInBrowser(t *testing.T) {
	b := newBrowser(t)
	d := minioShipDest(t)
	sp := newShipSpool(t, rand.New(rand.NewPCG(26, 1)), []int{300_000, 200_000, 100})
	_, err := d.st.Put(context.Background(), sp.key(sp.files[2]), strings.NewReader("not this"), &store.PutOptions{Size: 8})
	must(t, err)
	s := startShip(t, d.c, d.shipArgs(sp)...)
	st := s.waitFor("the collision, nothing in flight", func(st ship.Status) bool { return st.Fatal != nil && st.InFlight == 0 })
	url := fmt.Sprintf("http://127.0.0.1:%d/", s.port)
	var page renderedPage
	for try := 0; ; try++ { // the figures of one moment: /status the same before and after
		page = b.dom(url)
		after, _ := s.status()
		if after.Uploaded == st.Uploaded && after.Backlog == st.Backlog && after.State == st.State || try == 2 {
			break
		}
		st = after
	}
	checkFigures(t, "ship", page.figures(), map[string]string{
		"name": st.Node, "state": st.State, "health": st.Health,
		"backlog_files": fmt.Sprint(st.Backlog.Files), "backlog_bytes": fmt.Sprint(st.Backlog.Bytes),
		"in_flight": fmt.Sprint(st.InFlight), "retrying": fmt.Sprint(st.Retrying), "uploaded": fmt.Sprint(st.Uploaded),
		"pipeline": st.Pipeline, "epoch": st.Epoch, "destination": st.Destination, "put_mode": string(st.PutMode),
		"coordination": st.Probe.Coordination,
	})
	if st.Backlog.Files < 1 {
		t.Errorf("backlog %+v: the colliding file should still wait", st.Backlog)
	}
	if f := page.figures()["reason"]; !strings.Contains(f, "fatal: ") || !strings.Contains(f, "[WHARF_OBJECT_KEY_COLLISION]") {
		t.Errorf("the page's reason %q does not give the fatal error and its code", f)
	}
	errs := page.rows("errors")
	code, _ := errcode.Lookup("WHARF_OBJECT_KEY_COLLISION")
	if len(errs) == 0 || len(errs[0]) != 4 || errs[0][1] != "WHARF_OBJECT_KEY_COLLISION" || errs[0][3] != code.Doc().Remedy ||
		!strings.Contains(errs[0][2], sp.key(sp.files[2])) {
		t.Errorf("the page's last error %q: want the collision, its key and its remedy", errs)
	}
	if st.Uploaded > 0 && !strings.Contains(string(page), "<rect ") {
		t.Error("the page draws no throughput chart")
	}
	b.screenshot(url, "statuspage-ship")
	if code := s.stop(); code != 1 {
		t.Errorf("SIGTERM after a fatal error: exit %d, want 1", code)
	}
}

// TestE2EStatusPageBackfillFleetInBrowser: three workers of one job on MinIO, one object
// corrupt (quarantined at its first failure) and one held unread: while the job runs, the page
// of every worker, rendered by chromium, shows that worker's figures as its /status gives them,
// the whole job as `wharf backfill status` reads it from the coordinator, the worker holding
// the held split, and the quarantined object with its code and reason.
func TestE2EStatusPageBackfillFleetInBrowser(t *testing.T) {
	b := newBrowser(t)
	c, ep := minioCLI(t)
	srv := testenv.MinIO(t)
	bucket := randomBucket(t)
	src, err := store.Open(context.Background(), "s3://"+bucket, srv.StoreConfig(t))
	must(t, err)
	defer src.Close()
	must(t, src.MakeBucket(context.Background()))
	srv.RemoveBucketOnCleanup(t, bucket)
	objects := map[string]string{"logs/a-bad.ndjson.gz": "this is no gzip stream", "logs/z-held.ndjson": "{\"n\":0}\n"}
	for i := range 12 {
		objects[fmt.Sprintf("logs/m-%02d.ndjson", i)] = strings.Repeat(fmt.Sprintf("{\"object\":%d}\n", i), 5)
	}
	for k, v := range objects {
		_, err := src.Put(context.Background(), k, strings.NewReader(v), &store.PutOptions{Size: int64(len(v))})
		must(t, err)
	}
	hold := filepath.Join(t.TempDir(), "release")
	c.env = append(c.env, "WHARF_TEST_BACKFILL_HOLD="+hold, "WHARF_TEST_BACKFILL_HOLD_ONLY=z-held")
	var ws []*worker
	var ports []int
	for i := range 3 {
		port := testenv.FreeLoopbackPort(t)
		ports = append(ports, port)
		args := append(fleetArgs(ep, "s3://"+bucket+"/logs/", "-", "page", "bucket"),
			"--split-max-objects", "1", "--max-attempts", "1", "--listen", fmt.Sprintf("127.0.0.1:%d", port))
		ws = append(ws, startWorker(t, c, fmt.Sprintf("w%d", i), args))
	}
	// Wait until every split but the held one is final, as the coordinator records it.
	var rep backfill.JobReport
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		r := c.run(t, append(ep, "backfill", "status", "--job", "page", "--format", "json", "s3://"+bucket+"/logs/")...)
		rep = backfill.JobReport{}
		if r.code == 0 && json.Unmarshal([]byte(r.out), &rep) == nil && rep.Plan != nil &&
			rep.Splits[backfill.StatusDone] == 12 && rep.Splits[backfill.StatusQuarantined] == 1 && len(rep.Holders) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job did not reach 12 done, 1 quarantined, 1 held: %s\n%s", r.out, r.err)
		}
	}
	if rep.Plan.Splits != 14 || rep.State != backfill.JobRunning {
		t.Fatalf("report %+v: want 14 splits, running", rep)
	}
	var sawObjectError bool
	for i, port := range ports {
		url := fmt.Sprintf("http://127.0.0.1:%d/", port)
		page := b.dom(url)
		var st backfill.Status
		_, body, err := (&shipService{port: port}).get("/status")
		if err != nil || json.Unmarshal([]byte(body), &st) != nil {
			t.Fatalf("worker %d /status: %v %q", i, err, body)
		}
		what := fmt.Sprintf("worker w%d", i)
		checkFigures(t, what, page.figures(), map[string]string{
			"name": "page", "state": backfill.StateRunning, "health": "ok", "node": st.Node,
			"records": fmt.Sprint(st.Records), "splits_done_here": fmt.Sprint(st.Splits.DoneHere), "in_flight": fmt.Sprint(len(st.InFlight)),
			"job_state": rep.State, "plan": rep.Plan.ID[:12], "splits_planned": "14", "splits_pending": "0", "splits_leased": "1",
			"splits_done": "12", "splits_quarantined": "1", "objects": fmt.Sprint(rep.Plan.Objects), "bytes": fmt.Sprint(rep.Plan.Bytes),
			"job_records": fmt.Sprint(rep.Records), "job_leader": textfmt.Dash(rep.Leader),
		})
		workers := page.rows("workers")
		if len(workers) != 1 || workers[0][0] != rep.Holders[0].Node || workers[0][1] != rep.Holders[0].Split[:12] {
			t.Errorf("%s: the page's workers %q, want the holder %+v", what, workers, rep.Holders)
		}
		q := page.rows("quarantine")
		if len(q) != 1 || q[0][0] != "logs/a-bad.ndjson.gz" || q[0][2] != "WHARF_BACKFILL_OBJECT_FAILED" || q[0][3] != backfill.ReasonCorrupt {
			t.Errorf("%s: the page's quarantined objects %q, want logs/a-bad.ndjson.gz, WHARF_BACKFILL_OBJECT_FAILED, corrupt", what, q)
		}
		for _, e := range page.rows("errors") {
			if len(e) == 4 && e[1] == "WHARF_BACKFILL_OBJECT_FAILED" && strings.Contains(e[2], "a-bad.ndjson.gz") && e[3] != "" {
				sawObjectError = true
			}
		}
		if i == 0 {
			b.screenshot(url, "statuspage-backfill")
		}
	}
	if !sawObjectError {
		t.Error("no worker's page lists the corrupt object's error with its code and remedy")
	}
	must(t, os.WriteFile(hold, nil, 0o644))
	for i, w := range ws {
		select {
		case <-w.done:
		case <-time.After(2 * time.Minute):
			t.Fatalf("worker %d still running after the hold was released:\n%s", i, w.stderr.String())
		}
		if code := w.cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(w.stderr.String(), "WHARF_BACKFILL_QUARANTINED") {
			t.Errorf("worker %d: exit %d, want 1 with WHARF_BACKFILL_QUARANTINED:\n%s", i, code, lastLines(w.stderr.String(), 5))
		}
	}
}
