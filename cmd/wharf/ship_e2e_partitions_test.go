package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wharfdata/wharf/ship"
	"github.com/wharfdata/wharf/spool"
)

// keysUnder lists the keys under prefix in d's store, sorted.
func (d shipDest) keysUnder(t *testing.T, prefix string) []string {
	t.Helper()
	objs, err := d.st.ListAll(context.Background(), prefix)
	must(t, err)
	var keys []string
	for _, o := range objs {
		keys = append(keys, o.Key)
	}
	slices.Sort(keys)
	return keys
}

// spoolAdd runs `wharf --format json spool add ARGS…` (the built binary) and returns the files
// it spooled.
func spoolAdd(t *testing.T, args ...string) []spool.File {
	t.Helper()
	r := cli{}.run(t, append([]string{"--format", "json", "spool", "add"}, args...)...).must(t, 0)
	var files []spool.File
	dec := json.NewDecoder(strings.NewReader(r.out))
	for dec.More() {
		var f spool.File
		must(t, dec.Decode(&f))
		files = append(files, f)
	}
	return files
}

// readEpoch reads the epoch of the spool at dir.
func readEpoch(t *testing.T, dir string) uint64 {
	t.Helper()
	s, err := spool.Open(dir, spool.OpenOptions{})
	must(t, err)
	defer s.Close()
	return s.Epoch()
}

func epochHex(e uint64) string { return fmt.Sprintf("%016x", e) }

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	must(t, err)
	return v
}

// TestE2ESpoolAddZeroTime: `spool add --time 0001-01-01T00:00:00Z` is the zero time, which the
// spool reads as no time at all: it is refused by name, and nothing is spooled, rather than
// silently replaced by the file's modification time (another partition).
func TestE2ESpoolAddZeroTime(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "spool")
	wharf(t, "spool", "init", dir).must(t, 0)
	src := filepath.Join(t.TempDir(), "a.ndjson")
	writeFiles(t, filepath.Dir(src), map[string]string{"a.ndjson": "{}\n"})
	r := wharf(t, "spool", "add", "--spool", dir, "--dataset", "events", "--time", "0001-01-01T00:00:00Z", src).must(t, 2)
	for _, s := range []string{`--time "0001-01-01T00:00:00Z"`, "zero time", "[WHARF_USAGE]"} {
		if !strings.Contains(r.err, s) {
			t.Errorf("stderr %q lacks %q", r.err, s)
		}
	}
	if st := spoolStatusJSON(t, dir); st.Next != 1 {
		t.Errorf("the refused add spooled a file: %+v", st)
	}
	if _, err := os.Stat(src); err != nil {
		t.Errorf("the refused add moved its file: %v", err)
	}
	// A time given is the time used, to the second, even one long before the file was written.
	got := spoolAdd(t, "--spool", dir, "--dataset", "events", "--time", "1999-12-31T23:59:59Z", src)
	if len(got) != 1 || !got[0].Time.Equal(mustTime(t, "1999-12-31T23:59:59Z")) {
		t.Errorf("spooled %+v, want event time 1999-12-31T23:59:59Z", got)
	}
}

// TestE2EShipUnsyncedPartition: a file added with --clock-synced=false is shipped under
// …/{dataset}/unsynced/ instead of date=/hour=; one added with --clock-synced=true under its
// partition; one added without the flag as the kernel says (the same reading spool.ReadClock
// makes). The catalog and `spool add --format json` say which. On MinIO and the folder store.
func TestE2EShipUnsyncedPartition(t *testing.T) {
	for _, dest := range []func(*testing.T) shipDest{fileShipDest, minioShipDest} {
		d := dest(t)
		t.Run(d.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "spool")
			wharf(t, "spool", "init", dir).must(t, 0)
			src := t.TempDir()
			writeFiles(t, src, map[string]string{"a.ndjson": "{\"a\":1}\n", "b.ndjson": "{\"b\":2}\n", "c.ndjson": "{\"c\":3}\n"})
			at := "--time=2026-11-29T13:30:00Z"
			a := spoolAdd(t, "--spool", dir, "--dataset", "events", at, "--clock-synced=false", filepath.Join(src, "a.ndjson"))
			b := spoolAdd(t, "--spool", dir, "--dataset", "events", at, "--clock-synced=true", filepath.Join(src, "b.ndjson"))
			kernel := spool.ReadClock()
			c := spoolAdd(t, "--spool", dir, "--dataset", "events", at, filepath.Join(src, "c.ndjson"))
			files := slices.Concat(a, b, c)
			want := []spool.Clock{spool.ClockUnsynced, spool.ClockSynced, kernel.Clock}
			for i, f := range files {
				if f.Clock != want[i] {
					t.Errorf("file %d: spool add says clock %q, want %q (%s)", f.ID, f.Clock, want[i], kernel.Why)
				}
			}
			if cat := readFile(t, filepath.Join(dir, spool.CatalogFile)); !strings.Contains(cat, `"clock":"unsynced"`) || !strings.Contains(cat, `"clock":"synced"`) {
				t.Errorf("the catalog does not record the clock:\n%s", cat)
			}

			sp := &shipSpool{dir: dir, epoch: readEpoch(t, dir)}
			d.c.run(t, d.shipArgs(sp, "--drain", "--retention", "keep")...).must(t, 0)
			wantKeys := []string{
				"wharf/v1/edge/events/unsynced/gw-1_" + epochHex(sp.epoch) + "_00000000000000000001_00000000000000000001.ndjson",
				"wharf/v1/edge/events/date=2026-11-29/hour=13/gw-1_" + epochHex(sp.epoch) + "_00000000000000000002_00000000000000000002.ndjson",
				ship.ObjectKey("edge", "gw-1", sp.epoch, files[2]),
			}
			slices.Sort(wantKeys)
			if got := d.keysUnder(t, "wharf/"); !slices.Equal(got, wantKeys) {
				t.Errorf("objects under wharf/:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantKeys, "\n"))
			}
		})
	}
}

// TestE2EShipReplay: a replay spool ships only with its --replay id, and then only under
// wharf/replays/ID/; without --replay it is refused by name, as are another id and --replay on
// a production spool, each before anything reaches the store. On MinIO and the folder store.
func TestE2EShipReplay(t *testing.T) {
	for _, dest := range []func(*testing.T) shipDest{fileShipDest, minioShipDest} {
		d := dest(t)
		t.Run(d.name, func(t *testing.T) {
			src := t.TempDir()
			writeFiles(t, src, map[string]string{"p.ndjson": "{\"p\":1}\n", "r1.ndjson": "{\"r\":1}\n", "r2.ndjson": "{\"r\":2}\n"})
			prod := filepath.Join(t.TempDir(), "prod")
			replay := filepath.Join(t.TempDir(), "replay")
			wharf(t, "spool", "init", prod).must(t, 0)
			r := wharf(t, "spool", "init", "--replay", "fix-1", replay).must(t, 0)
			if !strings.Contains(r.out, "--replay fix-1") {
				t.Errorf("init --replay said %q: want how to ship it", r.out)
			}
			at := "--time=2026-11-29T13:30:00Z"
			spoolAdd(t, "--spool", prod, "--dataset", "events", at, "--clock-synced=true", filepath.Join(src, "p.ndjson"))
			spoolAdd(t, "--spool", replay, "--dataset", "events", at, "--clock-synced=true", filepath.Join(src, "r1.ndjson"), filepath.Join(src, "r2.ndjson"))
			ps := &shipSpool{dir: prod, epoch: readEpoch(t, prod)}
			rs := &shipSpool{dir: replay, epoch: readEpoch(t, replay)}
			if st := spoolStatusJSON(t, replay); st.Replay != "fix-1" {
				t.Errorf("spool status: replay %q, want fix-1", st.Replay)
			}

			for _, c := range []struct {
				name string
				sp   *shipSpool
				args []string
				code string
				says []string
			}{
				{"a replay spool without --replay", rs, nil, "WHARF_REPLAY_INTO_PRODUCTION", []string{replay, "replay fix-1", "--replay fix-1", "wharf/v1/"}},
				{"a replay spool with another id", rs, []string{"--replay", "fix-2"}, "WHARF_REPLAY_MISMATCH", []string{replay, "fix-2", "replay fix-1's spool"}},
				{"a production spool as a replay", ps, []string{"--replay", "fix-1"}, "WHARF_REPLAY_MISMATCH", []string{prod, "production spool", "without --replay"}},
			} {
				r := d.c.run(t, d.shipArgs(c.sp, append(c.args, "--drain")...)...).must(t, 2)
				for _, s := range append(c.says, "["+c.code+"]") {
					if !strings.Contains(r.err, s) {
						t.Errorf("%s: stderr lacks %q:\n%s", c.name, s, r.err)
					}
				}
				if keys := d.keysUnder(t, ""); len(keys) != 0 {
					t.Errorf("%s: the refused run wrote %v", c.name, keys)
				}
			}
			if st := spoolStatusJSON(t, prod); st.Files.Eligible.Files != 1 {
				t.Errorf("after the refusals the production spool has %+v, want its file still waiting", st.Files)
			}

			d.c.run(t, d.shipArgs(rs, "--replay", "fix-1", "--drain")...).must(t, 0)
			d.c.run(t, d.shipArgs(ps, "--drain")...).must(t, 0)
			var want []string
			for _, id := range []string{"00000000000000000001_00000000000000000001", "00000000000000000002_00000000000000000002"} {
				want = append(want, "wharf/replays/fix-1/v1/edge/events/date=2026-11-29/hour=13/gw-1_"+epochHex(rs.epoch)+"_"+id+".ndjson")
			}
			if got := d.keysUnder(t, "wharf/replays/"); !slices.Equal(got, want) {
				t.Errorf("objects under wharf/replays/:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			wantProd := []string{"wharf/v1/edge/events/date=2026-11-29/hour=13/gw-1_" + epochHex(ps.epoch) + "_00000000000000000001_00000000000000000001.ndjson"}
			if got := d.keysUnder(t, "wharf/v1/"); !slices.Equal(got, wantProd) {
				t.Errorf("objects under wharf/v1/ (production):\n%s\nwant only production's:\n%s", strings.Join(got, "\n"), strings.Join(wantProd, "\n"))
			}
		})
	}
}
