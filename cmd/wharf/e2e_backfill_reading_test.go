package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A job's objects are read one way for the job's life: a worker started with another
// compression or max_record_bytes (a config edited before a restart) is refused, naming the
// setting, instead of delivering the rest of the job in another reading — here, gzip bytes
// copied raw beside the records the first worker decoded. The job then finishes with its own
// settings, every record once.
func TestE2EBackfillRefusesAWorkerThatReadsTheJobAnotherWay(t *testing.T) {
	dir := t.TempDir()
	wharf(t, "mb", dir).must(t, 0)
	want := map[string]int{}
	for o := range 6 {
		var plain bytes.Buffer
		for r := range 5 {
			plain.WriteString(bfRecord(o, r) + "\n")
			want[bfRecord(o, r)]++
		}
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		_, _ = zw.Write(plain.Bytes())
		must(t, zw.Close())
		writeFiles(t, filepath.Join(dir, "in"), map[string]string{fmt.Sprintf("obj-%05d.ndjson", o): gz.String()})
	}
	args := backfillArgs(dir+"/in/", dir+"/out/", "--split-max-objects", "1", "--max-in-flight", "1", "--read-concurrency", "1")
	first := cli{env: []string{"WHARF_NODE_ID=w1", "WHARF_TEST_BACKFILL_PAUSE=400ms"}}
	p := start(t, first.command(args...))
	pollUntil(t, time.Minute, "a part of the first worker", func() bool {
		parts, _ := filepath.Glob(filepath.Join(dir, "out", "part-*"))
		return len(parts) > 0
	})
	must(t, p.cmd.Process.Kill())
	p.wait()

	for _, other := range [][]string{{"--compression", "none"}, {"--max-record-bytes", "2KiB"}} {
		r := cli{env: []string{"WHARF_NODE_ID=w2"}}.run(t, append(append([]string{}, args...), other...)...)
		if r.code != 2 || !strings.Contains(r.err, "WHARF_BACKFILL_JOB_MISMATCH") || !strings.Contains(r.err, strings.TrimPrefix(strings.ReplaceAll(other[0], "-", "_"), "__")) {
			t.Errorf("a worker with %v: exit %d, %s; want exit 2 naming the setting", other, r.code, r.err)
		}
	}
	cli{env: []string{"WHARF_NODE_ID=w3"}}.run(t, args...).must(t, 0)
	_, got := folderParts(t, filepath.Join(dir, "out"))
	sameRecords(t, "the job's parts", got, want)
}
