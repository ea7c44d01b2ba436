package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/wharfdata/wharf/internal/testenv"
)

// The end-to-end tests of what a backfill certifies, on the folder store unless they say
// otherwise: every record a job says it delivered is in its output, once, and nothing else.

// bfRecord is record r of object o.
func bfRecord(o, r int) string { return fmt.Sprintf(`{"object":%d,"record":%d}`, o, r) }

// writeBfObjects writes objects n of records each under dir (obj-00000.ndjson…) and returns
// the records.
func writeBfObjects(t *testing.T, dir string, n, records int) map[string]int {
	t.Helper()
	want := map[string]int{}
	files := map[string]string{}
	for o := range n {
		var b strings.Builder
		for r := range records {
			b.WriteString(bfRecord(o, r) + "\n")
			want[bfRecord(o, r)]++
		}
		files[fmt.Sprintf("obj-%05d.ndjson", o)] = b.String()
	}
	writeFiles(t, dir, files)
	return want
}

// lineCounts counts the lines of b.
func lineCounts(b []byte) map[string]int {
	got := map[string]int{}
	for l := range bytes.Lines(b) {
		got[string(bytes.TrimSuffix(l, []byte("\n")))]++
	}
	return got
}

// sameRecords fails unless got holds every record of want exactly as often, and nothing else.
func sameRecords(t *testing.T, what string, got, want map[string]int) {
	t.Helper()
	n := 0
	for r, k := range got {
		n += k
		if want[r] != k {
			t.Fatalf("%s: record %q %d times, want %d", what, r, k, want[r])
		}
	}
	for r, k := range want {
		if got[r] != k {
			t.Fatalf("%s: record %q %d times, want %d (%d records in all)", what, r, got[r], k, n)
		}
	}
}

// bfManifest is what the tests read of a backfill's manifest.json.
type bfManifest struct {
	Status string `json:"status"`
	Format string `json:"format"`
	Rows   int64  `json:"rows"`
	Parts  []struct {
		Key  string `json:"key"`
		Rows int64  `json:"rows"`
	} `json:"parts"`
}

// folderParts reads the manifest of the folder dest and the records of every part it lists.
func folderParts(t *testing.T, dest string) (bfManifest, map[string]int) {
	t.Helper()
	var m bfManifest
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(dest, "manifest.json"))), &m); err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, p := range m.Parts {
		f, err := os.Open(filepath.Join(dest, p.Key))
		must(t, err)
		dec, err := zstd.NewReader(f)
		must(t, err)
		b, err := io.ReadAll(dec)
		dec.Close()
		f.Close()
		must(t, err)
		if n := int64(bytes.Count(b, []byte("\n"))); n != p.Rows {
			t.Fatalf("part %s holds %d records, the manifest says %d", p.Key, n, p.Rows)
		}
		for r, k := range lineCounts(b) {
			got[r] += k
		}
	}
	return m, got
}

// bfFast are the flags of a quick folder-store job.
var bfFast = []string{"--lease-ttl", "2s", "--commit-interval", "100ms", "--poll-interval", "50ms", "--log-level", "warn"}

func backfillArgs(src, to string, more ...string) []string {
	return append(append([]string{"backfill", src, "--to", to}, bfFast...), more...)
}

// Point 2: a destination or a coordinator store whose keys a listing of the source reads is
// refused, byte prefix against byte prefix, in both directions; wharf's own records below a
// prefix are never read as input.
func TestE2EBackfillRefusesOutputTheSourceWouldRead(t *testing.T) {
	dir := t.TempDir()
	wharf(t, "mb", dir).must(t, 0) // one folder store: the key prefix "in" reads in-a/ and in-b/
	writeBfObjects(t, filepath.Join(dir, "in-a"), 2, 3)
	writeBfObjects(t, filepath.Join(dir, "in-b"), 2, 3)
	for _, c := range []struct{ src, to string }{
		{dir + "/in", dir + "/inx/"},       // a sibling the prefix "in" reads
		{dir + "/in/", dir + "/in/out/"},   // inside the source
		{dir + "/in/deep/", dir + "/in/"},  // the source inside the destination
		{dir + "/in", dir + "/"},           // the whole store
		{dir + "/i", dir + "/in/x/parts/"}, // deeper, same bytes
	} {
		r := wharf(t, backfillArgs(c.src, c.to, "--coordinator", "solo")...)
		if r.code != 2 || !strings.Contains(r.err, "[WHARF_BACKFILL_CONFIG_INVALID]") || !strings.Contains(r.err, "overlaps the source") {
			t.Errorf("backfill %s --to %s: exit %d, %s; want exit 2 refusing the overlap", c.src, c.to, r.code, r.err)
		}
	}
	r := wharf(t, backfillArgs(dir+"/in", "-", "--coordinator-store", dir+"/in-state/")...)
	if r.code != 2 || !strings.Contains(r.err, "coordinator_store") || !strings.Contains(r.err, "overlaps the source") {
		t.Errorf("a coordinator store the source reads: exit %d, %s; want exit 2 refusing it", r.code, r.err)
	}
	if _, err := os.Stat(filepath.Join(dir, "in-state")); err == nil {
		t.Errorf("the refused coordinator store was written to")
	}
	// Apart: a destination beside the prefix, records at the store's root or beside it.
	wharf(t, backfillArgs(dir+"/in", dir+"/out/")...).must(t, 0)
	wharf(t, backfillArgs(dir+"/in", "-", "--job", "apart", "--coordinator-store", dir+"/state/")...).must(t, 0)

	// Records of a job kept below a prefix (its coordinator store there) are not input.
	writeFiles(t, filepath.Join(dir, "logs"), map[string]string{
		"a.ndjson":                             bfRecord(1, 1) + "\n",
		"b/_wharf/backfill/other/current.json": `{"junk":"a record of another job"}` + "\n",
		"_wharf/backfill/other/plans/x.json":   `{"junk":"a plan of another job"}` + "\n",
		"b/c.ndjson":                           bfRecord(1, 2) + "\n",
	})
	r = wharf(t, backfillArgs(dir+"/logs/", "-", "--coordinator", "solo")...).must(t, 0)
	sameRecords(t, "stdout", lineCounts([]byte(r.out)), map[string]int{bfRecord(1, 1): 1, bfRecord(1, 2): 1})
}

// Point 2 on S3: the case, s3://b/in against s3://b/inx/, on one MinIO; the same
// bucket name behind another endpoint is another store.
func TestE2EBackfillRefusesOutputTheSourceWouldReadOnS3(t *testing.T) {
	c, ep := minioCLI(t)
	bucket := "s3://" + randomBucket(t)
	c.run(t, append(ep, "mb", bucket)...).must(t, 0)
	local := t.TempDir()
	writeFiles(t, local, map[string]string{"a.ndjson": bfRecord(0, 0) + "\n"})
	c.run(t, append(ep, "cp", filepath.Join(local, "a.ndjson"), bucket+"/in/a.ndjson")...).must(t, 0)
	for _, to := range []string{bucket + "/inx/", bucket + "/", bucket + "/in/sub/"} {
		r := c.run(t, append(ep, backfillArgs(bucket+"/in", to, "--coordinator", "solo")...)...)
		if r.code != 2 || !strings.Contains(r.err, "overlaps the source") {
			t.Errorf("backfill %s/in --to %s: exit %d, %s; want the overlap refused", bucket, to, r.code, r.err)
		}
	}
	r := c.run(t, append(ep, backfillArgs(bucket+"/in", "-", "--coordinator-store", bucket+"/inner/")...)...)
	if r.code != 2 || !strings.Contains(r.err, "coordinator_store") {
		t.Errorf("a coordinator store under the source: exit %d, %s", r.code, r.err)
	}
	c.run(t, append(ep, backfillArgs(bucket+"/in", bucket+"/out/")...)...).must(t, 0)
	c.run(t, append(ep, "validate", "--deep", bucket+"/out/")...).must(t, 0)
}

// Point 3: a worker killed between writing a part and committing its split leaves the part;
// the next worker finds the same part there and counts it written (the folder store refuses
// the create before it reads the body). A replay into an existing folder destination
// rewrites nothing and succeeds.
func TestE2EBackfillFolderSinkRecoversFromACrashAfterAPart(t *testing.T) {
	dir := t.TempDir()
	want := writeBfObjects(t, filepath.Join(dir, "src"), 30, 50)
	wharf(t, "mb", filepath.Join(dir, "out")).must(t, 0)
	args := backfillArgs(filepath.Join(dir, "src")+"/", filepath.Join(dir, "out")+"/", "--job", "crash", "--split-max-objects", "10", "--max-in-flight", "1")
	crashed := cli{env: []string{"WHARF_TEST_BACKFILL_CRASH=after-part"}}.run(t, args...)
	if crashed.code != -1 {
		t.Fatalf("the worker with the crash hook: exit %d, want killed\n%s", crashed.code, crashed.err)
	}
	if parts, _ := filepath.Glob(filepath.Join(dir, "out", "part-*")); len(parts) != 1 {
		t.Fatalf("%d parts after the crash, want the one written before it", len(parts))
	}
	wharf(t, args...).must(t, 0)
	wharf(t, "validate", "--deep", filepath.Join(dir, "out")+"/").must(t, 0)
	m, got := folderParts(t, filepath.Join(dir, "out"))
	sameRecords(t, "parts", got, want)
	if len(m.Parts) != 3 {
		t.Fatalf("%d parts, want 3", len(m.Parts))
	}

	// A replay (a fresh coordinator: every split read again) into the same destination.
	replay := backfillArgs(filepath.Join(dir, "src")+"/", filepath.Join(dir, "out")+"/", "--job", "crash", "--split-max-objects", "10", "--coordinator", "solo")
	before := readFile(t, filepath.Join(dir, "out", m.Parts[0].Key))
	wharf(t, replay...).must(t, 0)
	wharf(t, replay...).must(t, 0)
	if readFile(t, filepath.Join(dir, "out", m.Parts[0].Key)) != before {
		t.Fatalf("a replay changed part %s", m.Parts[0].Key)
	}
	wharf(t, "validate", "--deep", filepath.Join(dir, "out")+"/").must(t, 0)
}

// Point 6: what a backfill cannot reach is named by its code, never a panic.
func TestE2EBackfillFailuresAreCodesNotPanics(t *testing.T) {
	dir := t.TempDir()
	writeBfObjects(t, filepath.Join(dir, "src"), 2, 2)
	noPanic := func(what string, r result, code string) {
		t.Helper()
		if r.code != 1 || !strings.Contains(r.err, "["+code+"]") || strings.Contains(r.err, "panic") || strings.Contains(r.err, "goroutine") {
			t.Errorf("%s: exit %d, stderr %s; want exit 1 with %s", what, r.code, r.err, code)
		}
	}
	port := testenv.FreeLoopbackPort(t)
	noPanic("an unreachable NATS", wharf(t, backfillArgs(filepath.Join(dir, "src")+"/", "-",
		"--coordinator", fmt.Sprintf("nats://127.0.0.1:%d", port))...), "WHARF_BACKFILL_COORDINATOR_FAILED")
	noPanic("a missing source folder", wharf(t, backfillArgs(filepath.Join(dir, "nowhere")+"/", "-")...), "WHARF_BUCKET_MISSING")

	c, ep := minioCLI(t)
	noPanic("a missing source bucket", c.run(t, append(ep, backfillArgs("s3://"+randomBucket(t)+"/in/", "-")...)...), "WHARF_BUCKET_MISSING")
	srv := testenv.MinIO(t)
	proxy, behind := testenv.FaultProxy(t, srv)
	proxy.StripConditions(true)
	bucket := "s3://" + randomBucket(t)
	c.run(t, append(ep, "mb", bucket)...).must(t, 0)
	c.env = append(c.env, "WHARF_ENDPOINT_ALLOWLIST=127.0.0.1")
	noPanic("a store not proven cas", c.run(t, append([]string{"--endpoint", behind.Endpoint}, backfillArgs(bucket+"/in/", "-")...)...),
		"WHARF_COORDINATION_UNPROVEN")
}

// Point 6: a split leased just before a fatal error (its lease lands after the job was
// cancelled by a forbidden read of another split) is handed back, not left leased until its
// TTL.
func TestE2EBackfillReleasesASplitLeasedJustBeforeAFatalError(t *testing.T) {
	dir := t.TempDir()
	writeBfObjects(t, filepath.Join(dir, "src"), 4, 2)
	src := filepath.Join(dir, "src") + "/"
	r := cli{env: []string{"WHARF_TEST_BACKFILL_DENY=.ndjson"}}.run(t,
		backfillArgs(src, "-", "--job", "denied", "--split-max-objects", "1", "--max-in-flight", "2", "--lease-ttl", "1m", "--commit-interval", "1s")...)
	if r.code != 1 || !strings.Contains(r.err, "[WHARF_FORBIDDEN]") {
		t.Fatalf("exit %d, stderr %s; want the forbidden read's code", r.code, r.err)
	}
	st := wharf(t, "backfill", "status", "--job", "denied", src).must(t, 0)
	if !strings.Contains(st.out, "4 pending, 0 leased") {
		t.Fatalf("after the fatal error:\n%s\nwant every split handed back", st.out)
	}
}

// Point 7: the store sink's parts hold records of any bytes (plain text, invalid UTF-8): its
// manifest says so (format lines), and `validate` and `validate --deep` agree that the
// output is certified; a part cut short is still refused by --deep.
func TestE2EBackfillValidateAndDeepAgreeOnAnyRecords(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, filepath.Join(dir, "src"), map[string]string{
		"a.log":    "plain text, not JSON\nGET /index.html 200\n",
		"b.log":    "caf\xe9 latin-1\n\xff\xfe\x00 binary-ish\n",
		"c.ndjson": `{"json":true}` + "\n",
	})
	out := filepath.Join(dir, "out")
	wharf(t, "mb", out).must(t, 0)
	wharf(t, backfillArgs(filepath.Join(dir, "src")+"/", out+"/")...).must(t, 0)
	plain := wharf(t, "validate", out+"/").must(t, 0)
	deep := wharf(t, "validate", "--deep", out+"/")
	if deep.code != 0 || !strings.Contains(plain.out, "certified:       yes") || !strings.Contains(deep.out, "certified:       yes") {
		t.Fatalf("validate: exit %d\n%s\nvalidate --deep: exit %d\n%s%s", plain.code, plain.out, deep.code, deep.out, deep.err)
	}
	m, got := folderParts(t, out)
	if m.Format != "lines" || m.Rows != 5 {
		t.Fatalf("manifest format %q, %d rows; want lines, 5", m.Format, m.Rows)
	}
	sameRecords(t, "parts", got, map[string]int{"plain text, not JSON": 1, "GET /index.html 200": 1,
		"caf\xe9 latin-1": 1, "\xff\xfe\x00 binary-ish": 1, `{"json":true}`: 1})
}
