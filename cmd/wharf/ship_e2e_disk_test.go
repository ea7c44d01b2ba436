package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wharfdata/wharf/ship"
	"github.com/wharfdata/wharf/spool"
)

// spoolOnTmpfs makes a spool on a fresh 8 MiB tmpfs and adds files of the given sizes to it
// (copied in from another file system, so that they take the tmpfs's space).
func spoolOnTmpfs(t *testing.T, rng *rand.Rand, sizes []int) (*shipSpool, string) {
	t.Helper()
	disk := tmpfs(t, "8m")
	sp := &shipSpool{dir: filepath.Join(disk, "spool"), data: map[uint64][]byte{}}
	info, err := spool.Init(sp.dir)
	must(t, err)
	sp.epoch = info.Epoch
	addShipFiles(t, rng, sp, sizes)
	return sp, disk
}

// addShipFiles adds files of random bytes of the given sizes to sp, as newShipSpool does.
func addShipFiles(t *testing.T, rng *rand.Rand, sp *shipSpool, sizes []int) {
	t.Helper()
	src := t.TempDir()
	for _, n := range sizes {
		i := len(sp.files)
		b := make([]byte, n)
		for j := range b {
			b[j] = byte(rng.Uint32())
		}
		p := filepath.Join(src, fmt.Sprintf("part-%d.ndjson", i))
		must(t, os.WriteFile(p, b, 0o644))
		f, err := spool.Add(context.Background(), sp.dir, p, spool.AddOptions{Dataset: []string{"events", "metrics"}[i%2],
			Time: time.Date(2026, 11, 29, 10+i%10, 0, 0, 0, time.UTC), Records: uint64(1 + i), Clock: spool.ClockSynced})
		must(t, err)
		sp.files = append(sp.files, f)
		sp.data[f.ID] = b
	}
}

// toPageEnd adds tiny files to sp until its catalog's last page has less room than an uploaded
// record: tmpfs counts whole pages, and an append into the last one would need no new space.
func toPageEnd(t *testing.T, rng *rand.Rand, sp *shipSpool) {
	t.Helper()
	for n := 0; ; n++ {
		fi, err := os.Stat(filepath.Join(sp.dir, spool.CatalogFile))
		must(t, err)
		if fi.Size()%4096 > 3900 {
			return
		}
		if n > 200 {
			t.Fatal("the catalog never ended close to a page boundary")
		}
		addShipFiles(t, rng, sp, []int{1 + rng.IntN(64)})
	}
}

// TestE2EShipFullSpoolDisk: producers filled the spool's file system to the last byte.
// `wharf spool add` says so (WHARF_SPOOL_FULL, naming the path); `wharf ship`, the one thing
// that can free it, starts, ships every file, records each upload in the catalog's reserve
// and removes the files.
func TestE2EShipFullSpoolDisk(t *testing.T) {
	d := fileShipDest(t)
	rng := rand.New(rand.NewPCG(14, 1))
	sizes := make([]int, 12)
	for i := range sizes {
		sizes[i] = 400<<10 + rng.IntN(100<<10)
	}
	sp, disk := spoolOnTmpfs(t, rng, sizes)
	toPageEnd(t, rng, sp)
	fill(t, disk)

	extra := filepath.Join(t.TempDir(), "late.ndjson")
	must(t, os.WriteFile(extra, make([]byte, 64<<10), 0o644))
	r := d.c.run(t, "spool", "add", "--spool", sp.dir, "--dataset", "events", "--copy", extra)
	if r.code != 1 || !strings.Contains(r.err, "[WHARF_SPOOL_FULL]") || !strings.Contains(r.err, sp.dir) {
		t.Fatalf("spool add on a full disk: exit %d, stderr %s; want exit 1, WHARF_SPOOL_FULL naming a path in the spool", r.code, r.err)
	}

	s := startShip(t, d.c, d.shipArgs(sp, "--drain", "--log-level", "info")...)
	if code := s.wait(); code != 0 {
		t.Fatalf("wharf ship on a full spool disk: exit %d\nstderr: %s", code, lastLines(s.err.String(), 5))
	}
	d.checkShipped(t, sp, false)
	for _, f := range sp.files {
		if _, err := os.Stat(f.Path); !os.IsNotExist(err) {
			t.Errorf("file %d still in the spool after its upload: %v", f.ID, err)
		}
	}
}

// TestE2EShipSpoolDiskFullNoReserve: a spool whose catalog has no reserve left (copied onto a
// file system that is then filled) cannot even record an upload. The service starts, uploads,
// and says precisely what it cannot write — WHARF_SPOOL_FULL naming catalog.log in /status,
// /healthz 503 after three attempts — and keeps retrying instead of exiting; once space is
// freed it records every upload, removes the files and, with --drain, exits 0.
func TestE2EShipSpoolDiskFullNoReserve(t *testing.T) {
	d := fileShipDest(t)
	rng := rand.New(rand.NewPCG(14, 2))
	built := newShipSpool(t, rng, []int{1000, 2000, 3000})
	toPageEnd(t, rng, built)
	disk := tmpfs(t, "8m")
	sp := *built
	sp.dir = filepath.Join(disk, "spool")
	copyTree(t, built.dir, sp.dir) // plain copies: no reserve past the catalog's end
	for i := range sp.files {
		sp.files[i].Path = filepath.Join(sp.dir, filepath.FromSlash(sp.files[i].Name))
	}
	filler := fill(t, disk)

	s := startShip(t, d.c, d.shipArgs(&sp, "--drain", "--log-level", "info")...)
	catalog := filepath.Join(sp.dir, spool.CatalogFile)
	st := s.waitFor("the service to report the catalog it cannot write", func(st ship.Status) bool {
		return st.LastError != nil && st.LastError.Code == "WHARF_SPOOL_FULL" && st.Health == ship.HealthUnhealthy
	})
	if !strings.Contains(st.LastError.Message, catalog) || !strings.Contains(st.LastError.Message, "no space left") {
		t.Errorf("last_error %q: want it to name %s and say no space is left", st.LastError.Message, catalog)
	}
	if st.Backlog.Files != int64(len(sp.files)) {
		t.Errorf("backlog %d file(s) while nothing could be recorded, want %d", st.Backlog.Files, len(sp.files))
	}
	code, body, err := s.get("/healthz")
	if err != nil || code != 503 || !strings.HasPrefix(body, "unhealthy: ") || !strings.Contains(body, "[WHARF_SPOOL_FULL]") {
		t.Errorf("/healthz: %d %q (%v); want 503 unhealthy with WHARF_SPOOL_FULL", code, body, err)
	}
	time.Sleep(200 * time.Millisecond)
	if s.hasExited() {
		t.Fatalf("wharf ship exited on a full disk instead of retrying\nstderr: %s", s.err.String())
	}
	for _, f := range sp.files {
		if _, err := os.Stat(f.Path); err != nil {
			t.Fatalf("file %d was removed while its upload could not be recorded: %v", f.ID, err)
		}
	}

	must(t, os.Remove(filler))
	if code := s.wait(); code != 0 {
		t.Fatalf("after space was freed: exit %d, want 0 (drained)\nstderr: %s", code, s.err.String())
	}
	d.checkShipped(t, &sp, false)
	if !strings.Contains(s.err.String(), "no space left") {
		t.Errorf("the log never said what could not be written:\n%s", s.err.String())
	}
}
