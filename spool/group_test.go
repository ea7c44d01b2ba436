package spool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wharfdata/wharf/internal/flock"
)

// syncGate replaces syncCatalog for a test: it holds the first fsync until released (so that
// other calls queue behind that group), can fail the fsyncs after it, counts them, and
// records how much of the catalog the last successful one covered.
type syncGate struct {
	entered chan struct{} // closed when the first fsync starts
	release chan struct{} // the first fsync waits for it
	calls   atomic.Int64
	synced  atomic.Int64 // the catalog's size at the last successful fsync
	failAt  int64        // this call and every one after it fail (0: none)
	check   func()       // run at every fsync after the first, before it
}

var errInjected = errors.New("injected fsync failure")

func gate(t *testing.T) *syncGate {
	g := &syncGate{entered: make(chan struct{}), release: make(chan struct{})}
	old := syncCatalog
	syncCatalog = func(f *os.File) error {
		n := g.calls.Add(1)
		if n == 1 && g.release != nil {
			close(g.entered)
			<-g.release
		} else if g.check != nil {
			g.check()
		}
		if g.failAt > 0 && n >= g.failAt {
			return errInjected
		}
		if err := f.Sync(); err != nil {
			return err
		}
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		g.synced.Store(fi.Size())
		return nil
	}
	t.Cleanup(func() { syncCatalog = old })
	return g
}

// waitFor waits for ch to close, failing the test after 10 s.
func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// queued waits until n requests are queued behind the group under way.
func queued(t *testing.T, s *Spool, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.gmu.Lock()
		got := len(s.queue)
		s.gmu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d requests queued, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// replayDurable replays the part of the catalog the last successful fsync covered, as a new
// owner would after a crash at that moment.
func replayDurable(dir string, synced int64) (*state, error) {
	b, err := os.ReadFile(filepath.Join(dir, CatalogFile))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) < synced {
		return nil, fmt.Errorf("the catalog has %d bytes, but %d were fsynced", len(b), synced)
	}
	p := filepath.Join(os.TempDir(), fmt.Sprintf("catalog-prefix-%d-%d", os.Getpid(), time.Now().UnixNano()))
	if err := os.WriteFile(p, b[:synced], 0o644); err != nil {
		return nil, err
	}
	defer os.Remove(p)
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := &reader{path: p, st: newState(dir)}
	if err := r.read("test", f); err != nil {
		return nil, err
	}
	if r.torn != nil {
		return nil, fmt.Errorf("the fsynced part of the catalog ends in a torn line: %+v", r.torn)
	}
	return r.st, nil
}

// spoolOf makes a spool with n files and opens it.
func spoolOf(t *testing.T, n int) (string, *Spool, []File) {
	dir := newSpool(t)
	var files []File
	for i := range n {
		files = append(files, add(t, dir, "d", fmt.Sprintf("file %d\n", i), AddOptions{}))
	}
	return dir, open(t, dir, nil), files
}

// runGroup calls op for files[0] alone (its fsync held), then for every other file at once,
// queued behind it, then lets the fsyncs go. It returns each call's error; after each call
// returned, check(i) ran with what the last fsync covered.
func runGroup(t *testing.T, s *Spool, g *syncGate, files []File, op func(File) error, check func(i int) error) []error {
	t.Helper()
	errs := make([]error, len(files))
	var wg sync.WaitGroup
	call := func(i int) {
		defer wg.Done()
		errs[i] = op(files[i])
		if errs[i] == nil && check != nil {
			if err := check(i); err != nil {
				errs[i] = fmt.Errorf("after the call returned: %w", err)
			}
		}
	}
	wg.Add(1)
	go call(0)
	waitFor(t, g.entered, "the first catalog fsync")
	for i := 1; i < len(files); i++ {
		wg.Add(1)
		go call(i)
	}
	queued(t, s, len(files)-1)
	close(g.release)
	wg.Wait()
	return errs
}

// TestGroupCommitUploaded: concurrent Uploaded calls share one write and one fsync, and each
// returns only once a fsync covering its record has returned: replaying what was fsynced at
// that moment finds the file uploaded, with its key.
func TestGroupCommitUploaded(t *testing.T) {
	const n = 12
	dir, s, files := spoolOf(t, n)
	g := gate(t)
	upload := func(f File) error { return s.Uploaded(bg, f.ID, fmt.Sprintf("k/%d", f.ID), "e", "ok") }
	errs := runGroup(t, s, g, files, upload, func(i int) error {
		st, err := replayDurable(dir, g.synced.Load())
		if err != nil {
			return err
		}
		if f := st.files[files[i].ID]; f == nil || f.State != Uploaded || f.Key != fmt.Sprintf("k/%d", files[i].ID) {
			return fmt.Errorf("file %d is not recorded uploaded in the fsynced catalog: %+v", files[i].ID, f)
		}
		return nil
	})
	for i, err := range errs {
		if err != nil {
			t.Errorf("file %d: %v", files[i].ID, err)
		}
	}
	if c := g.calls.Load(); c != 2 {
		t.Errorf("%d catalog fsyncs for %d uploaded records, want 2 (one alone, then one group)", c, n)
	}
	if got := len(s.Retained()); got != n {
		t.Errorf("%d files retained, want %d", got, n)
	}
	must(t, s.Close())
	s2 := open(t, dir, nil)
	if got := len(s2.Retained()); got != n || len(s2.Pending()) != 0 {
		t.Errorf("after reopening: %d retained, %d pending; want %d, 0", got, len(s2.Pending()), n)
	}
	if lines := catalogLines(t, dir); len(lines) != 3*n {
		t.Errorf("%d catalog lines, want %d", len(lines), 3*n)
	}
}

// TestGroupCommitFsyncFails: when a group's fsync fails, every call of the group fails, none
// of their records stays in the catalog, and the calls succeed when made again.
func TestGroupCommitFsyncFails(t *testing.T) {
	const n = 8
	dir, s, files := spoolOf(t, n)
	g := gate(t)
	g.failAt = 2
	upload := func(f File) error { return s.Uploaded(bg, f.ID, fmt.Sprintf("k/%d", f.ID), "e", "ok") }
	errs := runGroup(t, s, g, files, upload, nil)
	if errs[0] != nil {
		t.Errorf("the first group: %v", errs[0])
	}
	for i := 1; i < n; i++ {
		if !errors.Is(errs[i], errInjected) || !errors.Is(errs[i], ErrIO) || !strings.HasPrefix(fmt.Sprint(errs[i]), "uploaded ") {
			t.Errorf("file %d: error %v, want the injected fsync failure as an uploaded ErrIO", files[i].ID, errs[i])
		}
	}
	if lines := catalogLines(t, dir); len(lines) != 2*n+1 {
		t.Errorf("%d catalog lines after the failed group, want %d:\n%s", len(lines), 2*n+1, strings.Join(lines, "\n"))
	}
	if p := s.Pending(); len(p) != n-1 {
		t.Errorf("%d files pending after the failed group, want %d", len(p), n-1)
	}
	g.failAt = 0
	for _, f := range files[1:] {
		must(t, upload(f))
	}
	must(t, s.Close())
	s2 := open(t, dir, nil)
	if got := len(s2.Retained()); got != n {
		t.Errorf("after retrying and reopening: %d retained, want %d", got, n)
	}
}

// TestRemoveDefersItsRecord: Remove unlinks the file at once and costs no fsync; the
// deleted records ride on the next catalog write (here a group of Uploaded), then on Refresh
// and Close, and the catalog replays to the same states.
func TestRemoveDefersItsRecord(t *testing.T) {
	const n = 6
	dir, s, files := spoolOf(t, n+2)
	for _, f := range files[:n] {
		must(t, s.Uploaded(bg, f.ID, "k", "e", "ok"))
	}
	g := gate(t)
	g.release = nil
	for _, f := range files[:n] {
		must(t, s.Remove(bg, f.ID))
		if _, err := os.Stat(f.Path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("file %d still in ready/ after Remove: %v", f.ID, err)
		}
	}
	if c, d := g.calls.Load(), countDeleted(t, dir); c != 0 || d != 0 {
		t.Errorf("after %d removals: %d catalog fsyncs, %d deleted records written; want 0, 0", n, c, d)
	}
	if st := s.Stats(); st.Deleted.Files != n || st.Uploaded.Files != 0 || len(s.Retained()) != 0 {
		t.Errorf("stats %+v, %d retained; want %d deleted, none retained", st, len(s.Retained()), n)
	}
	must(t, s.Uploaded(bg, files[n].ID, "k", "e", "ok"))
	if c, d := g.calls.Load(), countDeleted(t, dir); c != 1 || d != n {
		t.Errorf("after the next Uploaded: %d catalog fsyncs, %d deleted records; want 1, %d", c, d, n)
	}
	st, err := replayDurable(dir, g.synced.Load())
	must(t, err)
	if len(st.files) != 2 || st.stats.Deleted.Files != n {
		t.Errorf("the fsynced catalog holds %d files, %d deleted; want 2, %d", len(st.files), st.stats.Deleted.Files, n)
	}
	must(t, s.Remove(bg, files[n].ID))
	must(t, s.Refresh(bg))
	if c, d := g.calls.Load(), countDeleted(t, dir); c != 2 || d != n+1 {
		t.Errorf("after Refresh: %d catalog fsyncs, %d deleted records; want 2, %d", c, d, n+1)
	}
	must(t, s.Refresh(bg))
	if c := g.calls.Load(); c != 2 {
		t.Errorf("a Refresh with nothing deferred fsynced the catalog (%d fsyncs, want 2)", c)
	}
	must(t, s.Uploaded(bg, files[n+1].ID, "k", "e", "ok"))
	must(t, s.Remove(bg, files[n+1].ID))
	want := s.Stats()
	must(t, s.Close())
	if got := open(t, dir, nil).Stats(); got != want || got.Deleted.Files != n+2 {
		t.Errorf("after Close and reopening: stats %+v, want %+v", got, want)
	}
}

// TestRemoveLostRecordsAreHarmless: a crash that loses the deferred deleted records leaves the
// files recorded uploaded and gone from ready/: the next owner opens the spool, lists them as
// retained, and removing them records them deleted.
func TestRemoveLostRecordsAreHarmless(t *testing.T) {
	const n = 4
	dir, s, files := spoolOf(t, n)
	for _, f := range files {
		must(t, s.Uploaded(bg, f.ID, "k", "e", "ok"))
		must(t, s.Remove(bg, f.ID))
	}
	// A crash: the process's descriptors close, nothing else runs.
	s.mu.Lock()
	s.closed = true
	s.cat.Close()
	flock.Unlock(s.lock)
	s.lock.Close()
	s.mu.Unlock()
	if d := countDeleted(t, dir); d != n-1 {
		t.Fatalf("%d deleted records written before the crash, want %d (all but the last, carried by the next Uploaded)", d, n-1)
	}
	s2 := open(t, dir, nil)
	ret := s2.Retained()
	if len(ret) != 1 || ret[0].ID != files[n-1].ID {
		t.Fatalf("retained after the crash: %+v, want file %d", ret, files[n-1].ID)
	}
	must(t, s2.Remove(bg, ret[0].ID))
	must(t, s2.Close())
	if st := open(t, dir, nil).Stats(); st.Deleted.Files != n {
		t.Errorf("stats %+v, want %d deleted", st, n)
	}
}

// TestRemoveWaitsForDurableUpload: a Remove made while the group carrying the file's uploaded
// record is being fsynced does not unlink the file before that fsync returns, and a Remove of
// a file not recorded uploaded is refused and leaves it.
func TestRemoveWaitsForDurableUpload(t *testing.T) {
	dir, s, files := spoolOf(t, 2)
	g := gate(t)
	uploaded := make(chan error, 1)
	go func() { uploaded <- s.Uploaded(bg, files[0].ID, "k", "e", "ok") }()
	waitFor(t, g.entered, "the first catalog fsync")
	removed := make(chan error, 1)
	go func() { removed <- s.Remove(bg, files[0].ID) }()
	time.Sleep(50 * time.Millisecond) // room for a wrong unlink to happen
	if _, err := os.Stat(files[0].Path); err != nil {
		t.Errorf("the file was removed before its uploaded record was durable: %v", err)
	}
	close(g.release)
	must(t, <-uploaded)
	must(t, <-removed)
	st, err := replayDurable(dir, g.synced.Load())
	must(t, err)
	if f := st.files[files[0].ID]; f == nil || f.State != Uploaded {
		t.Errorf("file %d removed, but the fsynced catalog has it %+v", files[0].ID, f)
	}
	wantKind(t, s.Remove(bg, files[1].ID), ErrState, files[1].Path, "not uploaded")
	if _, err := os.Stat(files[1].Path); err != nil {
		t.Errorf("a file not recorded uploaded was removed: %v", err)
	}
}

// TestGroupCommitCancelWhileQueued: a call whose context ends while it waits in the queue
// returns the context's error and leaves no record; the group under way is unaffected.
func TestGroupCommitCancelWhileQueued(t *testing.T) {
	dir, s, files := spoolOf(t, 2)
	g := gate(t)
	first := make(chan error, 1)
	go func() { first <- s.Uploaded(bg, files[0].ID, "k", "e", "ok") }()
	waitFor(t, g.entered, "the first catalog fsync")
	ctx, cancel := context.WithCancel(bg)
	second := make(chan error, 1)
	go func() { second <- s.Uploaded(ctx, files[1].ID, "k", "e", "ok") }()
	queued(t, s, 1)
	cancel()
	if err := <-second; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled while queued: %v, want context.Canceled", err)
	}
	queued(t, s, 0)
	close(g.release)
	must(t, <-first)
	if p := s.Pending(); len(p) != 1 || p[0].ID != files[1].ID {
		t.Errorf("pending %+v, want file %d only", p, files[1].ID)
	}
	if lines := catalogLines(t, dir); len(lines) != 5 {
		t.Errorf("%d catalog lines, want 5", len(lines))
	}
}

// TestGroupCommitClosed: a call on a closed spool is ErrState.
func TestGroupCommitClosed(t *testing.T) {
	_, s, files := spoolOf(t, 1)
	must(t, s.Close())
	wantKind(t, s.Uploaded(bg, files[0].ID, "k", "e", "ok"), ErrState, "closed")
	wantKind(t, s.Remove(bg, files[0].ID), ErrState, "closed")
}

// countDeleted counts the deleted records in the catalog.
func countDeleted(t *testing.T, dir string) int {
	n := 0
	for _, l := range catalogLines(t, dir) {
		if strings.Contains(l, `"type":"deleted"`) {
			n++
		}
	}
	return n
}

// TestGroupCommitMixed: many goroutines upload and remove files at once (run it with -race);
// every Uploaded returns only once what was fsynced records it, and the catalog replays to
// the same states.
func TestGroupCommitMixed(t *testing.T) {
	const workers, each = 8, 6
	dir, s, files := spoolOf(t, workers*each)
	g := gate(t)
	g.release = nil // no held fsync
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for _, f := range files[w*each : (w+1)*each] {
				if err := s.Uploaded(bg, f.ID, "k", "e", "ok"); err != nil {
					t.Errorf("uploaded %d: %v", f.ID, err)
					return
				}
				st, err := replayDurable(dir, g.synced.Load())
				if err != nil || st.files[f.ID] == nil || st.files[f.ID].State != Uploaded {
					t.Errorf("file %d: not recorded uploaded in the fsynced catalog when Uploaded returned (%v)", f.ID, err)
				}
				if f.ID%2 == 0 {
					continue
				}
				if err := s.Remove(bg, f.ID); err != nil {
					t.Errorf("remove %d: %v", f.ID, err)
					return
				}
			}
		})
	}
	wg.Wait()
	want := s.Stats()
	if want.Uploaded.Files+want.Deleted.Files != workers*each || want.Deleted.Files != workers*each/2 {
		t.Errorf("stats %+v", want)
	}
	t.Logf("%d catalog fsyncs for %d records", g.calls.Load(), workers*each*3/2)
	must(t, s.Close())
	if got := open(t, dir, nil).Stats(); got != want {
		t.Errorf("replayed stats %+v, want %+v", got, want)
	}
}

// TestGroupDelay: with OpenOptions.GroupDelay, Uploaded calls arriving one after the other
// within the delay are written and fsynced as one group, and each returns only once that
// fsync has.
func TestGroupDelay(t *testing.T) {
	dir := newSpool(t)
	var files []File
	for i := range 6 {
		files = append(files, add(t, dir, "d", fmt.Sprintf("file %d\n", i), AddOptions{}))
	}
	s, err := Open(dir, OpenOptions{GroupDelay: 300 * time.Millisecond})
	must(t, err)
	defer s.Close()
	g := gate(t)
	g.release = nil
	var wg sync.WaitGroup
	for i, f := range files {
		time.Sleep(10 * time.Millisecond)
		wg.Go(func() {
			if err := s.Uploaded(bg, f.ID, "k", "e", "ok"); err != nil {
				t.Errorf("file %d: %v", i, err)
				return
			}
			st, err := replayDurable(dir, g.synced.Load())
			if err != nil || st.files[f.ID] == nil || st.files[f.ID].State != Uploaded {
				t.Errorf("file %d: not durable when Uploaded returned (%v)", f.ID, err)
			}
		})
	}
	wg.Wait()
	if c := g.calls.Load(); c != 1 {
		t.Errorf("%d catalog fsyncs for %d calls within the delay, want 1", c, len(files))
	}
}
