package main

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/probe"
	"github.com/wharfdata/wharf/transfer"
)

func azuriteShipDest(t *testing.T) shipDest {
	c, ep, srv := azuriteCLI(t)
	root := "az://" + srv.Account + "/" + randomBucket(t)
	c.run(t, append(slices.Clone(ep), "mb", root)...).must(t, 0)
	url := root + "/landing"
	st, err := store.Open(context.Background(), url, &store.Config{Set: []store.Setting{
		{Name: "endpoint", Value: srv.Endpoint}, {Name: "account_key", Value: srv.KeyRef(t)}}})
	must(t, err)
	t.Cleanup(func() { st.Close() })
	return shipDest{name: "azurite", c: c, args: ep, url: url, st: st, large: true}
}

// uploadsAt lists the incomplete uploads at url with `wharf uploads ls`.
func (d shipDest) uploadsAt(t *testing.T, url string) []transfer.Pending {
	t.Helper()
	r := d.c.run(t, append(slices.Clone(d.args), "uploads", "ls", "--format", "json", url)...).must(t, 0)
	var out []transfer.Pending
	for line := range strings.Lines(r.out) {
		var u transfer.Pending
		if err := json.Unmarshal([]byte(line), &u); err != nil {
			t.Fatalf("uploads ls: %q: %v", line, err)
		}
		out = append(out, u)
	}
	return out
}

// killMidUpload runs `wharf ship` on sp and SIGKILLs it when 32 MiB of its 17 MiB file are
// read (each part is read once for its CRC-32C, then sent: 34 MiB in all), so at least one
// part was sent: its multipart upload (its staged blocks, on Azure) stays open in the store.
func (d shipDest) killMidUpload(t *testing.T, sp *shipSpool) {
	t.Helper()
	c := d.c
	c.env = append(slices.Clone(c.env), envTestShip+"=kill-mid-body:33554432")
	cmd := c.command(d.shipArgs(sp, "--drain")...)
	var stderr testenv.SyncBuffer
	cmd.Stderr = &stderr
	must(t, cmd.Start())
	waitKilled(t, cmd)
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatalf("wharf ship was not killed mid-upload: exit %d\nstderr: %s", cmd.ProcessState.ExitCode(), stderr.String())
	}
}

// TestE2EShipAbortsItsStaleUploads: a SIGKILL in the middle of a multipart upload leaves it
// open, billed. Restarted, the service aborts the upload at exactly the key of the file it
// sends again, and only that one: another spool's, at its own key, stays until an operator
// aborts it with `wharf uploads abort` (which by default spares uploads younger than 24 h).
// On MinIO and Azurite (staged, uncommitted blocks).
func TestE2EShipAbortsItsStaleUploads(t *testing.T) {
	if testing.Short() {
		t.Skip("uploads 17 MiB files four times")
	}
	for _, dest := range []func(*testing.T) shipDest{minioShipDest, azuriteShipDest} {
		d := dest(t)
		t.Run(d.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(14, 10))
			mine, other := newShipSpool(t, rng, []int{17 << 20}), newShipSpool(t, rng, []int{17 << 20})
			mineURL, otherURL := d.url+"/"+mine.key(mine.files[0]), d.url+"/"+other.key(other.files[0])
			d.killMidUpload(t, mine)
			d.killMidUpload(t, other)
			if got := d.uploadsAt(t, mineURL); len(got) != 1 || got[0].URL != mineURL {
				t.Fatalf("after the kill, uploads at %s: %+v; want the one it left", mineURL, got)
			}
			if got := d.uploadsAt(t, otherURL); len(got) != 1 {
				t.Fatalf("after the kill, uploads at %s: %+v; want the one it left", otherURL, got)
			}

			r := d.c.run(t, d.shipArgs(mine, "--drain", "--log-level", "info")...).must(t, 0)
			if !strings.Contains(r.err, "aborted an incomplete upload an earlier run left at the key") {
				t.Errorf("the restart did not log the abort:\n%s", r.err)
			}
			if got := d.uploadsAt(t, mineURL); len(got) != 0 {
				t.Errorf("after the restart, uploads at its file's key: %+v; want none", got)
			}
			d.checkShipped(t, mine, false)
			if got := d.uploadsAt(t, otherURL); len(got) != 1 {
				t.Fatalf("the other spool's upload: %+v; want it untouched", got)
			}

			abort := append(slices.Clone(d.args), "uploads", "abort", otherURL)
			if r := d.c.run(t, abort...).must(t, 0); !strings.Contains(r.out, "aborted 0 incomplete upload(s)") {
				t.Errorf("uploads abort (default --older-than 24h) said %q; want nothing aborted", r.out)
			}
			dry := append(slices.Clone(d.args), "uploads", "abort", "--dry-run", "--older-than", "0", otherURL)
			if r := d.c.run(t, dry...).must(t, 0); !strings.Contains(r.out, "would abort") || len(d.uploadsAt(t, otherURL)) != 1 {
				t.Errorf("uploads abort --dry-run said %q, or aborted", r.out)
			}
			all := append(slices.Clone(d.args), "uploads", "abort", "--older-than", "0", otherURL)
			if r := d.c.run(t, all...).must(t, 0); !strings.Contains(r.out, "aborted 1 incomplete upload(s)") {
				t.Errorf("uploads abort --older-than 0 said %q", r.out)
			}
			if got := d.uploadsAt(t, otherURL); len(got) != 0 {
				t.Errorf("after uploads abort: %+v; want none", got)
			}
		})
	}
}

// TestE2EUploadsUnsupported: a store whose incomplete uploads cannot be listed says so and
// why, with WHARF_UNSUPPORTED: GCS resumable uploads, the folder store.
func TestE2EUploadsUnsupported(t *testing.T) {
	gcs := testenv.FakeGCS(t)
	c := cli{env: []string{"STORAGE_EMULATOR_HOST=" + strings.TrimPrefix(gcs.Endpoint, "http://")}}
	r := c.run(t, "--anonymous", "uploads", "ls", "gs://"+randomBucket(t)+"/raw/")
	if r.code != 1 || !strings.Contains(r.err, "[WHARF_UNSUPPORTED]") || !strings.Contains(r.err, "resumable upload") {
		t.Errorf("uploads ls gs://…: exit %d, stderr %s; want WHARF_UNSUPPORTED explaining resumable uploads", r.code, r.err)
	}
	r = wharf(t, "uploads", "abort", t.TempDir())
	if r.code != 1 || !strings.Contains(r.err, "[WHARF_UNSUPPORTED]") || !strings.Contains(r.err, "no incomplete uploads") {
		t.Errorf("uploads abort DIR: exit %d, stderr %s; want WHARF_UNSUPPORTED", r.code, r.err)
	}
	if r := wharf(t, "uploads", "ls", "--older-than", "-1h", t.TempDir()); r.code != 2 {
		t.Errorf("--older-than -1h: exit %d, want 2", r.code)
	}
}

// TestE2EShipProbeSentinels: the startup probe leaves no sentinel under _wharf/probe/ behind,
// and a sentinel left by a run killed in the middle of the probe is removed by the next one.
func TestE2EShipProbeSentinels(t *testing.T) {
	for _, dest := range []func(*testing.T) shipDest{fileShipDest, minioShipDest} {
		d := dest(t)
		t.Run(d.name, func(t *testing.T) {
			sp := newShipSpool(t, rand.New(rand.NewPCG(14, 11)), []int{100})
			sentinels := func() []string {
				objs, err := d.st.ListAll(context.Background(), probe.Prefix)
				must(t, err)
				var keys []string
				for _, o := range objs {
					keys = append(keys, o.Key)
				}
				return keys
			}
			c := d.c
			c.env = append(slices.Clone(c.env), envTestShip+"=kill-after-probe-put")
			cmd := c.command(d.shipArgs(sp, "--drain")...)
			must(t, cmd.Start())
			waitKilled(t, cmd)
			if left := sentinels(); len(left) != 1 {
				t.Fatalf("after a kill in the probe: sentinels %v, want the one it wrote", left)
			}
			d.c.run(t, d.shipArgs(sp, "--drain")...).must(t, 0)
			if left := sentinels(); len(left) != 0 {
				t.Errorf("after a clean run: sentinels %v left under %s", left, probe.Prefix)
			}
			d.checkShipped(t, sp, false)
		})
	}
}
