package main

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wharfdata/wharf/store"
)

// TestE2EShipFolderStoreStatAgreesWithLs: after shipping to a folder store given as a relative
// path, `wharf stat ./lake/KEY` shows the object as `wharf ls ./lake` does: same size and
// ETag, and its metadata (a local path means the store rooted at the nearest .wharf-meta,
// not at the object's own directory).
func TestE2EShipFolderStoreStatAgreesWithLs(t *testing.T) {
	work := t.TempDir()
	c := cli{dir: work}
	sp := newShipSpool(t, rand.New(rand.NewPCG(14, 12)), []int{1000})
	c.run(t, "mb", "./lake").must(t, 0)
	c.run(t, "ship", "--spool", sp.dir, "--to", "./lake", "--pipeline", "edge", "--node", "gw-1", "--listen", "off",
		"--drain", "--retention", "keep", "--log-level", "warn").must(t, 0)
	key := sp.key(sp.files[0])

	r := c.run(t, "ls", "--format", "json", "./lake/"+path.Dir(key)+"/").must(t, 0)
	var listed store.ObjectInfo
	must(t, json.Unmarshal([]byte(strings.TrimSpace(r.out)), &listed))
	r = c.run(t, "stat", "--format", "json", "./lake/"+key).must(t, 0)
	var stat store.ObjectInfo
	must(t, json.Unmarshal([]byte(r.out), &stat))
	if listed.ETag == "" || stat.ETag != listed.ETag || stat.Size != listed.Size || stat.Size != 1000 {
		t.Errorf("stat %+v, ls %+v: want the same object (size 1000, one ETag)", stat, listed)
	}
	if stat.Metadata["wharf-sha256"] != sp.files[0].SHA256 || stat.Metadata["wharf-node"] != "gw-1" {
		t.Errorf("stat metadata %v: want the shipped object's wharf-sha256 and wharf-node", stat.Metadata)
	}
	if r := c.run(t, "stat", "./lake/"+key).must(t, 0); strings.Contains(r.out, "metadata: -") || !strings.Contains(r.out, "wharf-sha256: "+sp.files[0].SHA256) {
		t.Errorf("stat (pretty) shows no metadata:\n%s", r.out)
	}
}

// TestE2EShipFolderStoreFullSameBytes: a folder store on a disk with less free space than the
// file, and the file's object already at its key (a run killed between the put and its
// record). The service must find the object equal (conflict_equal) and finish, not retry
// forever staging a copy the disk cannot hold. (The file store must check the key before it
// stages the body: store/file/write.go.)
func TestE2EShipFolderStoreFullSameBytes(t *testing.T) {
	disk := tmpfs(t, "8m")
	lake := filepath.Join(disk, "lake")
	must(t, os.Mkdir(lake, 0o755))
	st, err := store.Open(context.Background(), lake, nil)
	must(t, err)
	defer st.Close()
	d := shipDest{name: "file", url: "file://" + lake, st: st}
	sp := newShipSpool(t, rand.New(rand.NewPCG(14, 13)), []int{3 << 20})

	c := d.c
	c.env = append(slices.Clone(c.env), envTestShip+"=kill-after-put:1")
	cmd := c.command(d.shipArgs(sp, "--drain", "--retention", "keep")...)
	must(t, cmd.Start())
	waitKilled(t, cmd)
	d.checkObject(t, sp, sp.files[0])

	filler := fill(t, disk)
	f, err := os.OpenFile(filler, os.O_RDWR, 0)
	must(t, err)
	fi, err := f.Stat()
	must(t, err)
	must(t, f.Truncate(fi.Size()-1<<20)) // 1 MiB free: room for the probe, not for the file
	f.Close()

	s := startShip(t, d.c, d.shipArgs(sp, "--drain", "--retention", "keep", "--log-level", "info")...)
	done := make(chan int, 1)
	go func() { done <- s.wait() }()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d, want 0\nstderr: %s", code, s.err.String())
		}
	case <-time.After(20 * time.Second):
		st, _ := s.status()
		t.Fatalf("still retrying after 20 s (last error %+v): the object already at the key was never compared\nlast of stderr: %s",
			st.LastError, lastLines(s.err.String(), 3))
	}
	if !strings.Contains(s.err.String(), "outcome=conflict_equal") {
		t.Errorf("the upload did not end conflict_equal:\n%s", s.err.String())
	}
	d.checkShipped(t, sp, true)
}
