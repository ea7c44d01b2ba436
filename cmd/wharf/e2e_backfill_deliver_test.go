package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
)

// badGzip is a gzip object of records whose last bytes are cut off.
func badGzip(t *testing.T, o int) string {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	for r := range 20 {
		fmt.Fprintln(zw, bfRecord(o, r))
	}
	must(t, zw.Close())
	return string(b.Bytes()[:b.Len()-9])
}

// poisonedSplit writes 300 good objects and, among them, a truncated gzip: one split.
func poisonedSplit(t *testing.T, dir string) map[string]int {
	t.Helper()
	want := writeBfObjects(t, dir, 300, 10)
	writeFiles(t, dir, map[string]string{"obj-00150-bad.ndjson.gz": badGzip(t, 1000)})
	return want
}

// noneOf fails when got holds a record of object o more than once.
func atMostOnce(t *testing.T, got map[string]int, o int) {
	t.Helper()
	for r, n := range got {
		if strings.HasPrefix(r, fmt.Sprintf(`{"object":%d,`, o)) && n > 1 {
			t.Fatalf("record %s of the bad object delivered %d times", r, n)
		}
	}
}

// Point 4, store sink: one truncated gzip among 300 good objects of one split is quarantined
// alone: the split's part holds every other record once, the bad object is named with its
// reason, and the job ends failed. A replay writes the same part (its key is the id of the
// members it holds) and collides with nothing.
func TestE2EBackfillQuarantinesTheObjectNotItsSplit(t *testing.T) {
	dir := t.TempDir()
	src, out := filepath.Join(dir, "src")+"/", filepath.Join(dir, "out")
	want := poisonedSplit(t, filepath.Join(dir, "src"))
	wharf(t, "mb", out).must(t, 0)
	r := wharf(t, backfillArgs(src, out+"/", "--job", "poison", "--max-attempts", "2")...).must(t, 1)
	if !strings.Contains(r.err, "[WHARF_BACKFILL_QUARANTINED]") || !strings.Contains(r.err, "obj-00150-bad.ndjson.gz (corrupt") ||
		!strings.Contains(r.err, "1 object(s) quarantined, in 1 of 1 split(s)") {
		t.Fatalf("stderr %s; want the bad object quarantined, named with its reason", r.err)
	}
	wharf(t, "validate", out+"/").must(t, 1)
	m, got := folderParts(t, out)
	if m.Status != "failed" || len(m.Parts) != 1 {
		t.Fatalf("manifest status %s with %d parts, want a failed run with the split's part", m.Status, len(m.Parts))
	}
	sameRecords(t, "the part", got, want)
	st := wharf(t, "backfill", "status", "--job", "poison", src).must(t, 1)
	if !strings.Contains(st.out, "obj-00150-bad.ndjson.gz: corrupt after 2 attempt(s)") {
		t.Fatalf("status:\n%s", st.out)
	}
	part := readFile(t, filepath.Join(out, m.Parts[0].Key))
	wharf(t, backfillArgs(src, out+"/", "--job", "poison-replay", "--coordinator", "solo", "--max-attempts", "2")...).must(t, 1)
	if m2, _ := folderParts(t, out); len(m2.Parts) != 1 || m2.Parts[0].Key != m.Parts[0].Key || readFile(t, filepath.Join(out, m.Parts[0].Key)) != part {
		t.Fatalf("the replay's part differs: %+v", m2.Parts)
	}
}

// Point 4, standard output: the split's other members are delivered once, not once per
// attempt: a bad object stops an attempt only after what the reader received was committed.
func TestE2EBackfillQuarantinesTheObjectNotItsSplitOnStdout(t *testing.T) {
	dir := t.TempDir()
	want := poisonedSplit(t, dir)
	// No commit by the interval: only the end of an attempt commits.
	r := wharf(t, backfillArgs(dir+"/", "-", "--max-attempts", "3", "--lease-ttl", "1m", "--commit-interval", "1m")...).must(t, 1)
	if !strings.Contains(r.err, "obj-00150-bad.ndjson.gz (corrupt") {
		t.Fatalf("stderr %s", r.err)
	}
	got := lineCounts([]byte(r.out))
	atMostOnce(t, got, 1000)
	for rec := range got {
		if strings.HasPrefix(rec, `{"object":1000,`) {
			delete(got, rec)
		}
	}
	sameRecords(t, "stdout", got, want)
}

// Point 4: every bad object of a split is named with its reason, not only the first.
func TestE2EBackfillNamesEveryBadObjectOfASplit(t *testing.T) {
	dir := t.TempDir()
	want := writeBfObjects(t, dir, 20, 5)
	writeFiles(t, dir, map[string]string{
		"obj-00005-bad.ndjson.gz": badGzip(t, 1000),
		"obj-00012-bad.ndjson":    bfRecord(1001, 0) + "\n" + strings.Repeat("x", 2<<10) + "\n",
	})
	r := wharf(t, backfillArgs(dir+"/", "-", "--job", "two-bad", "--max-attempts", "2", "--max-record-bytes", "1KiB")...).must(t, 1)
	for _, bad := range []string{"obj-00005-bad.ndjson.gz (corrupt: unexpected EOF", "obj-00012-bad.ndjson (corrupt: record 1"} {
		if !strings.Contains(r.err, bad) {
			t.Errorf("stderr does not name %s:\n%s", bad, r.err)
		}
	}
	if !strings.Contains(r.err, "2 object(s) quarantined, in 1 of 1 split(s)") {
		t.Errorf("stderr %s: want both objects of the one split counted", r.err)
	}
	got := lineCounts([]byte(r.out))
	atMostOnce(t, got, 1001)
	delete(got, bfRecord(1001, 0))
	sameRecords(t, "stdout", got, want)
	st := wharf(t, "backfill", "status", "--job", "two-bad", dir+"/").must(t, 1)
	if !strings.Contains(st.out, "obj-00005-bad.ndjson.gz: corrupt") || !strings.Contains(st.out, "obj-00012-bad.ndjson: corrupt") {
		t.Fatalf("status:\n%s", st.out)
	}
}

// Point 5: records count as delivered only once the reader of standard output has taken them
// out of the pipe. A reader that reads 100 lines and goes away leaves the rest to the next
// run, which delivers every record the reader did not read.
func TestE2EBackfillStdoutCountsOnlyWhatItsReaderTook(t *testing.T) {
	dir := t.TempDir()
	// About 1 MiB of records: the worker writes them all into the pipe (which it widens to
	// 1 MiB) long before the reader takes them, and must not count them delivered.
	want := writeBfObjects(t, dir, 40, 800)
	args := backfillArgs(dir+"/", "-", "--job", "head", "--commit-interval", "10ms")
	cmd := cli{}.command(args...)
	pr, pw, err := os.Pipe()
	must(t, err)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = pw, &stderr
	must(t, cmd.Start())
	pw.Close()
	read := map[string]int{}
	var line []byte
	for b := make([]byte, 1); len(read) < 100; {
		if _, err := pr.Read(b); err != nil {
			t.Fatalf("reading the worker's output: %v\n%s", err, stderr.String())
		}
		if b[0] != '\n' {
			line = append(line, b[0])
			continue
		}
		read[string(line)]++
		line = line[:0]
	}
	time.Sleep(500 * time.Millisecond) // the worker fills the pipe meanwhile, committing every 10ms
	pr.Close()
	err = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(stderr.String(), "[WHARF_BACKFILL_SINK_FAILED]") ||
		!strings.Contains(stderr.String(), "its reader closed it") {
		t.Errorf("the worker whose reader left: %v, exit %d\n%s", err, code, stderr.String())
	}
	rerun := wharf(t, args...).must(t, 0)
	got := lineCounts([]byte(rerun.out))
	for r, n := range read {
		got[r] += n
	}
	for r, n := range want {
		if got[r] < n {
			t.Fatalf("record %s was never read: the first run counted it delivered (%d records read, %d delivered by the rerun)",
				r, len(read), len(lineCounts([]byte(rerun.out))))
		}
	}

	// To a regular file, every record once: the file is synced before each commit.
	f, err := os.Create(filepath.Join(t.TempDir(), "records"))
	must(t, err)
	defer f.Close()
	cmd = cli{}.command(backfillArgs(dir+"/", "-", "--job", "file", "--coordinator", "solo")...)
	cmd.Stdout, cmd.Stderr = f, &stderr
	must(t, cmd.Run())
	sameRecords(t, "the file", lineCounts([]byte(readFile(t, f.Name()))), want)
}
