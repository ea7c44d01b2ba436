package spool

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// fakeKernel makes adjtimex answer state, status and maxerror (µs) for the rest of the test.
func fakeKernel(t *testing.T, state int, status int32, maxerrorUS int64, err error) {
	t.Helper()
	old := adjtimex
	t.Cleanup(func() { adjtimex = old })
	adjtimex = func(tx *unix.Timex) (int, error) {
		if tx.Modes != 0 {
			t.Errorf("adjtimex called with modes %#x: the spool must only read the clock", tx.Modes)
		}
		tx.Status, tx.Maxerror = status, maxerrorUS
		return state, err
	}
}

// TestClockFromKernel: the kernel's answer, through the adjtimex seam, decides the reading:
// synchronized only without STA_UNSYNC, outside TIME_ERROR, and with a maximum error of at
// most MaxClockError; a failed call says nothing.
func TestClockFromKernel(t *testing.T) {
	for _, c := range []struct {
		name     string
		state    int
		status   int32
		maxerror int64
		err      error
		want     Clock
		why      string
	}{
		{"synchronized", unix.TIME_OK, unix.STA_PLL, 12_000, nil, ClockSynced, "maximum error 12ms"},
		{"leap second pending", unix.TIME_INS, unix.STA_PLL | unix.STA_INS, 3_000, nil, ClockSynced, "synchronized"},
		{"STA_UNSYNC", unix.TIME_OK, unix.STA_UNSYNC, 16_000_000, nil, ClockUnsynced, "STA_UNSYNC"},
		{"TIME_ERROR", unix.TIME_ERROR, 0, 200, nil, ClockUnsynced, "TIME_ERROR"},
		{"error bound too large", unix.TIME_OK, unix.STA_PLL, 1_500_000, nil, ClockUnsynced, "maximum error 1.5s, over 1s"},
		{"error bound at the limit", unix.TIME_OK, unix.STA_PLL, 1_000_000, nil, ClockSynced, "maximum error 1s"},
		{"adjtimex refused", 0, 0, 0, unix.EPERM, ClockUnknown, "adjtimex failed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fakeKernel(t, c.state, c.status, c.maxerror, c.err)
			r := ReadClock()
			if r.Clock != c.want || !strings.Contains(r.Why, c.why) {
				t.Errorf("ReadClock() = %+v, want %q with %q", r, c.want, c.why)
			}
		})
	}
}

// TestAddRecordsClock: an add records the kernel's reading unless told the state; the catalog
// keeps it across a reopen; an unknown state given is refused.
func TestAddRecordsClock(t *testing.T) {
	dir := newSpool(t)
	fakeKernel(t, unix.TIME_ERROR, unix.STA_UNSYNC, 16_000_000, nil)
	asked := add(t, dir, "d", "one", AddOptions{Time: t0})
	given := add(t, dir, "d", "two", AddOptions{Time: t0, Clock: ClockSynced})
	fakeKernel(t, unix.TIME_OK, 0, 1000, nil)
	synced := add(t, dir, "d", "three", AddOptions{Time: t0})
	told := add(t, dir, "d", "four", AddOptions{Time: t0, Clock: ClockUnsynced})
	w, err := Create(dir, "d", "ndjson")
	must(t, err)
	w.Clock = ClockUnsynced
	_, err = w.Write([]byte("five"))
	must(t, err)
	written, err := w.Commit(bg, t0, 1)
	must(t, err)
	fakeKernel(t, 0, 0, 0, errors.New("no adjtimex here"))
	unknown := add(t, dir, "d", "six", AddOptions{Time: t0})
	want := []Clock{ClockUnsynced, ClockSynced, ClockSynced, ClockUnsynced, ClockUnsynced, ClockUnknown}
	for i, f := range []File{asked, given, synced, told, written, unknown} {
		if f.Clock != want[i] {
			t.Errorf("file %d: clock %q, want %q", f.ID, f.Clock, want[i])
		}
	}
	lines := catalogLines(t, dir)
	if !strings.Contains(lines[0], `"clock":"unsynced"`) || strings.Contains(lines[len(lines)-2], `"clock"`) {
		t.Errorf("catalog:\n%s\nwant clock unsynced on the first file and no clock on the last", strings.Join(lines, "\n"))
	}
	s := open(t, dir, nil)
	for i, f := range s.Pending() {
		if f.Clock != want[i] {
			t.Errorf("reopened, file %d: clock %q, want %q", f.ID, f.Clock, want[i])
		}
	}
	src := writeSrc(t, t.TempDir(), "x.ndjson", "x")
	_, err = Add(bg, dir, src, AddOptions{Dataset: "d", Clock: "maybe"})
	wantKind(t, err, ErrInput, `clock "maybe"`)
}

// TestCatalogClockCompatible: a finalized record from before the clock was recorded reads as
// ClockUnknown; a clock that is neither synced nor unsynced is a corrupt record.
func TestCatalogClockCompatible(t *testing.T) {
	dir := newSpool(t)
	f := add(t, dir, "d", "old", AddOptions{Time: t0, Clock: ClockSynced})
	lines := catalogLines(t, dir)
	old := strings.Replace(lines[0], `"clock":"synced",`, "", 1)
	if old == lines[0] {
		t.Fatalf("no clock field to remove in %s", lines[0])
	}
	writeCatalog(t, dir, old+"\n"+lines[1]+"\n")
	s := open(t, dir, nil)
	if p := s.Pending(); len(p) != 1 || p[0].Clock != ClockUnknown || p[0].SHA256 != f.SHA256 {
		t.Errorf("an old record read as %+v, want clock unknown", p)
	}
	must(t, s.Close())
	bad := strings.Replace(lines[0], `"clock":"synced"`, `"clock":"roughly"`, 1)
	writeCatalog(t, dir, bad+"\n"+lines[1]+"\n")
	_, err := Open(dir, OpenOptions{})
	wantKind(t, err, ErrCorrupt, filepath.Join(dir, CatalogFile), "line 1", `clock "roughly"`)
}
