package iceberg

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
	_ "github.com/wharfdata/wharf/store/azure" // az:// for Azurite
	_ "github.com/wharfdata/wharf/store/gcs"   // gs:// for fake-gcs-server
)

// Concurrent committers in processes of their own: the test binary started again as
// TestProcessAppender, once per process, each opening the table's store itself and appending
// its files one commit each; every operation's call, return and result is written as a JSON
// line to a file, which the parent gathers and gives the history checker
// (checkProcessHistory) with the table as it ends.

const (
	envProcClient  = "WHARF_ICEBERG_PROC_CLIENT"  // the process's number; set only in a child
	envProcStore   = "WHARF_ICEBERG_PROC_STORE"   // the store's kind and the table's URL: "s3 s3://…"
	envProcDir     = "WHARF_ICEBERG_PROC_DIR"     // ready-N, go and ops-N.jsonl are here
	envProcCommits = "WHARF_ICEBERG_PROC_COMMITS" // commits per process
	envProcBroken  = "WHARF_ICEBERG_PROC_BROKEN"  // "1": commit without the condition

	// envProcessCommits is the knob of the parent tests: commits per process. The default
	// is fullProcCommits under scripts/test.sh (the servers required) and quickProcCommits
	// in a plain go test, which runs the folder store only.
	envProcessCommits = "WHARF_ICEBERG_PROCESS_COMMITS"
	fullProcCommits   = 50
	quickProcCommits  = 10

	processes = 4
	// procAttempts is far more than 4 racing processes spend: a commit that runs out of
	// attempts fails the test as a lost operation would.
	procAttempts = 1000
	// brokenCommits is the size of the broken variant's run: enough to lose appends every
	// time (its writers never see each other), small enough to be quick.
	brokenCommits = 20
)

// procOp is one Append as a child process records it.
type procOp struct {
	Proc     int    `json:"proc"`
	N        int    `json:"n"`    // its number in its process
	File     string `json:"file"` // the appended file's location
	Call     int64  `json:"call"` // wall clock, Unix nanoseconds: the processes share it
	Return   int64  `json:"ret"`
	OK       bool   `json:"ok"`
	Err      string `json:"err,omitempty"`
	Conflict bool   `json:"conflict,omitempty"` // ErrCommitConflict: it committed nothing
	Version  int    `json:"version,omitempty"`  // the metadata version it created
	Snapshot int64  `json:"snapshot,omitempty"` // the snapshot it made, and its sequence number
	Seq      int64  `json:"seq,omitempty"`
	Creates  int64  `json:"creates"` // creates of a metadata file it tried: 1 + races lost
}

// procCommits is the commits per process the parent tests run.
func procCommits(t testing.TB) int {
	s := os.Getenv(envProcessCommits)
	switch {
	case s == "" && testenv.Required():
		return fullProcCommits
	case s == "":
		return quickProcCommits
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a number of commits per process", envProcessCommits, s)
	}
	return n
}

// procStoreConfig is how the parent and its children open the store of kind: the test
// servers' variables are inherited by the children.
func procStoreConfig(t testing.TB, kind string) *store.Config {
	t.Helper()
	switch kind {
	case "s3":
		return testenv.MinIO(t).StoreConfig(t)
	case "gs":
		srv := testenv.FakeGCS(t)
		return &store.Config{Getenv: os.Getenv, Set: []store.Setting{{Name: "endpoint", Value: srv.Endpoint}, {Name: "anonymous", Value: "true"}}}
	case "az":
		srv := testenv.Azurite(t)
		return &store.Config{Getenv: os.Getenv, Set: []store.Setting{{Name: "endpoint", Value: srv.Endpoint}, {Name: "account_key", Value: srv.KeyRef(t)}}}
	}
	return &store.Config{CreateDir: true}
}

// freshTableURL returns a table location on a new bucket of kind (a temp dir for the folder
// store), emptied and removed when t ends.
func freshTableURL(t *testing.T, kind string) string {
	t.Helper()
	if kind == "file" {
		return "file://" + t.TempDir() + "/tables/t"
	}
	name := fmt.Sprintf("wharf-iceberg-proc-%s-%d-%d", kind, os.Getpid(), bucketSeq.Add(1))
	bucket := kind + "://" + name
	if kind == "az" {
		bucket = "az://" + testenv.Azurite(t).Account + "/" + name
	}
	tempBucket(t, bucket, procStoreConfig(t, kind))
	return bucket + "/tables/t"
}

// TestProcessAppender is one committer of TestProcessAppends, when runAppenders starts it:
// it writes its files, says it is ready, waits for the go, and appends them one commit
// each, recording each Append in ops-N.jsonl as it returns.
func TestProcessAppender(t *testing.T) {
	c, err := strconv.Atoi(os.Getenv(envProcClient))
	if err != nil {
		t.Skip("a committer process of TestProcessAppends, started by runAppenders")
	}
	kind, url, _ := strings.Cut(os.Getenv(envProcStore), " ")
	dir := os.Getenv(envProcDir)
	commits, err := strconv.Atoi(os.Getenv(envProcCommits))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	st := openStore(t, url, procStoreConfig(t, kind))
	tbl, err := Load(ctx, st, &Options{Attempts: procAttempts, Backoff: time.Millisecond, MaxBackoff: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var creates atomic.Int64
	tbl.unconditional = os.Getenv(envProcBroken) == "1"
	tbl.beforeCreate = func() { creates.Add(1) }
	keys := make([]string, commits)
	for i := range keys {
		keys[i] = writeParquet(t, st, fmt.Sprintf("data/p%d-%03d.parquet", c, i), int64(c*commits+i)*10, 10)
	}
	out, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("ops-%d.jsonl", c)), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("ready-%d", c)), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "go")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no go from the parent")
		}
	}
	for i, key := range keys {
		before := creates.Load()
		op := procOp{Proc: c, N: i, File: tbl.Location() + "/" + key, Call: time.Now().UnixNano()}
		// One change per file, named by it: made at most once, and (being named) without
		// reading every manifest to refuse a duplicate.
		done, err := tbl.Commit(ctx, Change{ID: key, Files: []File{{Path: key}}})
		op.Return = time.Now().UnixNano()
		op.Creates = creates.Load() - before
		switch {
		case err != nil:
			op.Err, op.Conflict = err.Error(), errors.Is(err, ErrCommitConflict)
		case done.Already:
			op.Err = "the change was already in the table before it was committed"
		default:
			op.OK, op.Version, op.Snapshot = true, done.Version, done.Snapshot
			if s := tbl.CurrentSnapshot(); s != nil && s.SnapshotID == done.Snapshot {
				op.Seq = s.SequenceNumber
			}
		}
		b, err := json.Marshal(op)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := out.Write(append(b, '\n')); err != nil {
			t.Fatal(err)
		}
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// appenderProc is a committer process.
type appenderProc struct {
	cmd  *exec.Cmd
	out  bytes.Buffer // its stdout and stderr, to read once done is closed
	done chan struct{}
	err  error
}

// procTiming is how long a run's phases took.
type procTiming struct {
	ready, commits time.Duration // start to every child ready; the go to the last exit
}

// runAppenders creates a table at url on the store of kind, starts the committer processes
// on it, gives them the go together once each has written its files, and returns their
// operations.
func runAppenders(t *testing.T, kind, url string, commits int, broken bool) ([]procOp, procTiming) {
	t.Helper()
	if _, err := Create(t.Context(), openStore(t, url, procStoreConfig(t, kind)), testSchema(), nil); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	children := make([]*appenderProc, processes)
	defer func() {
		cancel() // kills any child still running (a Fatal below)
		for _, ch := range children {
			if ch != nil {
				<-ch.done
			}
		}
	}()
	brokenEnv := envProcBroken + "="
	if broken {
		brokenEnv += "1"
	}
	started := time.Now()
	for c := range children {
		ch := &appenderProc{done: make(chan struct{})}
		ch.cmd = exec.CommandContext(ctx, os.Args[0], "-test.run=^TestProcessAppender$", "-test.count=1")
		ch.cmd.Env = append(os.Environ(), envProcClient+"="+strconv.Itoa(c), envProcStore+"="+kind+" "+url,
			envProcDir+"="+dir, envProcCommits+"="+strconv.Itoa(commits), brokenEnv)
		ch.cmd.Stdout, ch.cmd.Stderr = &ch.out, &ch.out
		if err := ch.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		children[c] = ch
		go func() { ch.err = ch.cmd.Wait(); close(ch.done) }()
	}
	var timing procTiming
	for ready := 0; ready < processes; time.Sleep(2 * time.Millisecond) {
		ready = 0
		for c, ch := range children {
			select {
			case <-ch.done:
				t.Fatalf("committer %d exited before it was ready: %v\n%s", c, ch.err, ch.out.Bytes())
			default:
			}
			if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("ready-%d", c))); err == nil {
				ready++
			}
		}
	}
	timing.ready = time.Since(started)
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	gone := time.Now()
	var ops []procOp
	for c, ch := range children {
		<-ch.done
		if ch.err != nil {
			t.Errorf("committer %d: %v\n%s", c, ch.err, ch.out.Bytes())
		}
		ops = append(ops, readOps(t, filepath.Join(dir, fmt.Sprintf("ops-%d.jsonl", c)))...)
	}
	timing.commits = time.Since(gone)
	return ops, timing
}

func readOps(t *testing.T, name string) []procOp {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Error(err)
		return nil
	}
	defer f.Close()
	var ops []procOp
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var op procOp
		if err := json.Unmarshal(sc.Bytes(), &op); err != nil {
			t.Errorf("%s: %q: %v", name, sc.Bytes(), err)
			continue
		}
		ops = append(ops, op)
	}
	if err := sc.Err(); err != nil {
		t.Error(err)
	}
	return ops
}

// procSummary counts a run's operations.
func procSummary(ops []procOp) string {
	var ok, failed int
	var creates, most int64
	for _, op := range ops {
		if op.OK {
			ok++
		} else {
			failed++
		}
		creates += op.Creates
		most = max(most, op.Creates)
	}
	return fmt.Sprintf("%d appends ok, %d failed; %d creates of a metadata file (%d races lost, at most %d tries for one append)",
		ok, failed, creates, creates-int64(ok), most)
}

// Four processes, each opening the store itself, append 50 files each (procCommits), one
// commit per file, to one table on the folder store, MinIO, fake-gcs-server and Azurite:
// every append succeeds and the history checker passes.
func TestProcessAppends(t *testing.T) {
	commits := procCommits(t)
	for _, kind := range []string{"file", "s3", "gs", "az"} {
		t.Run(kind, func(t *testing.T) {
			url := freshTableURL(t, kind)
			ops, timing := runAppenders(t, kind, url, commits, false)
			if t.Failed() {
				t.FailNow()
			}
			start := time.Now()
			err := checkProcessHistory(t.Context(), openStore(t, url, procStoreConfig(t, kind)), ops, processes*commits)
			t.Logf("%s: %d processes × %d commits: ready in %s, committed in %s, checked in %s: %s", kind, processes, commits,
				timing.ready.Round(time.Millisecond), timing.commits.Round(time.Millisecond), time.Since(start).Round(time.Millisecond), procSummary(ops))
			if err != nil {
				t.Fatal(err)
			}
			for _, op := range ops {
				if !op.OK {
					t.Errorf("committer %d append %d (%s): %s", op.Proc, op.N, op.File, op.Err)
				}
			}
		})
	}
}

// The same processes committing without the condition (each puts the next metadata file
// over whatever is there, so none ever loses a race or sees another's commits) lose
// appends, and the history checker says so: it is able to fail.
func TestProcessAppendsUnconditionalFails(t *testing.T) {
	for _, kind := range []string{"file", "s3"} {
		t.Run(kind, func(t *testing.T) {
			url := freshTableURL(t, kind)
			ops, _ := runAppenders(t, kind, url, brokenCommits, true)
			if t.Failed() {
				t.FailNow()
			}
			err := checkProcessHistory(t.Context(), openStore(t, url, procStoreConfig(t, kind)), ops, processes*brokenCommits)
			if err == nil {
				t.Fatalf("commits without the condition (%s): the history checker found nothing wrong", procSummary(ops))
			}
			t.Logf("%s: %s; the checker: %v", kind, procSummary(ops), err)
		})
	}
}
