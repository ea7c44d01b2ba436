package lease

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
	"github.com/wharfdata/wharf/store/file"
	"github.com/wharfdata/wharf/store/probe"
)

// mounted is a file store that reports another mount type, as one on a network share would.
type mounted struct {
	driver.Bucket
	mountType string
}

func (m mounted) Unwrap() driver.Bucket { return m.Bucket }

func (m mounted) Describe() driver.Description {
	d := m.Bucket.Describe()
	d.MountType = m.mountType
	return d
}

func fileStore(t *testing.T, dir, mountType string) *store.Store {
	t.Helper()
	fb, err := file.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b driver.Bucket = fb
	if mountType != "" {
		b = mounted{fb, mountType}
	}
	s := store.New(b, nil)
	if err := s.MakeBucket(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}

func openProbed(t *testing.T, s *store.Store, mod func(*Config)) (*Leaser, error) {
	t.Helper()
	c := testConfig("a")
	c.LockDir = t.TempDir()
	if mod != nil {
		mod(&c)
	}
	return Open(ctx, s, c, &Options{Clock: newClock(epoch)})
}

// A file store on a network mount type resolves single-writer: a machine lease, nothing
// written to acquire it, and a second taker on this machine is held.
func TestNetworkMountGetsAMachineLease(t *testing.T) {
	lockDir := t.TempDir()
	s := fileStore(t, t.TempDir(), "nfs4")
	l, err := openProbed(t, s, func(c *Config) { c.LockDir = lockDir })
	if err != nil {
		t.Fatal(err)
	}
	if l.Mode() != ModeMachine || !strings.Contains(l.Reason(), "nfs4") {
		t.Fatalf("mode %s (%s), want machine naming nfs4", l.Mode(), l.Reason())
	}
	h, err := l.Acquire(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	if objs, _ := s.ListAll(ctx, ""); len(objs) != 0 {
		t.Errorf("a machine lease wrote %d objects (first %s)", len(objs), objs[0].Key)
	}
	l2, _ := openProbed(t, s, func(c *Config) { c.LockDir = lockDir; c.Node = "b" })
	_, err = l2.Acquire(ctx, "orders")
	var he *HeldError
	if !errors.As(err, &he) || !strings.Contains(he.Holder, "node a") {
		t.Fatalf("second machine lease: %v, want held naming node a", err)
	}
	// Commits still go through the lease record.
	if _, err := h.Commit(ctx, "k", 1); err != nil {
		t.Fatal(err)
	}
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	h2, err := l2.Acquire(ctx, "orders")
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	if e, err := h2.Commit(ctx, "k", 2); err != nil || e.Seq != 2 {
		t.Errorf("second holder's commit %+v, %v", e, err)
	}
	h2.Release(ctx)
	// The commits wrote the lease record (it holds the log's head), naming no holder.
	if rec, _, found, err := OpenLog(s, "orders").Lease(ctx); err != nil || !found || rec.Holder != "" || !rec.Released || rec.Seq != 2 {
		t.Errorf("after machine leases' commits the record is %+v (found %v, %v), want one naming no holder at seq 2", rec, found, err)
	}
}

func TestNetworkMountRefusesDeclaredCAS(t *testing.T) {
	s := fileStore(t, t.TempDir(), "cifs")
	_, err := openProbed(t, s, func(c *Config) { c.Coordination = CoordinationCAS })
	if !errors.Is(err, ErrCoordinationUnproven) || !strings.Contains(err.Error(), "cifs") {
		t.Fatalf("%v, want coordination unproven naming cifs", err)
	}
}

func TestStoreIgnoringConditionsIsUnproven(t *testing.T) {
	s := store.New(ignoring{memBucket()}, nil)
	_, err := openProbed(t, s, nil)
	if !errors.Is(err, ErrCoordinationUnproven) {
		t.Fatalf("%v, want coordination unproven", err)
	}
}

// realTmpfs returns a directory on a real tmpfs: one mounted for the test (as root), else
// /dev/shm where it is a tmpfs; it skips t with the reason when there is none.
func realTmpfs(t *testing.T) string {
	dir := t.TempDir()
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", dir).CombinedOutput()
	if err == nil {
		t.Cleanup(func() { _ = exec.Command("umount", dir).Run() })
		return dir
	}
	t.Logf("mount -t tmpfs: %v %s; trying /dev/shm", err, strings.TrimSpace(string(out)))
	root, err := os.MkdirTemp("/dev/shm", "wharf-lease-")
	if err != nil {
		t.Skipf("no tmpfs to test on: mount -t tmpfs failed (not root?) and /dev/shm is not writable: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	return root
}

// A real tmpfs is a local file system: the probe proves cas there.
func TestRealTmpfsIsCAS(t *testing.T) {
	if fileStore(t, t.TempDir(), "").Describe().MountType == "" {
		t.Skip("this platform does not report mount types")
	}
	root := realTmpfs(t)
	s := fileStore(t, root, "")
	if mt := s.Describe().MountType; mt != "tmpfs" {
		t.Skipf("%s is on %s here, not tmpfs", root, mt)
	}
	l, err := openProbed(t, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if l.Mode() != ModeBucket {
		t.Fatalf("tmpfs: mode %s (%s), want bucket", l.Mode(), l.Reason())
	}
	h, err := l.Acquire(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, found, _ := OpenLog(s, "orders").Lease(ctx); !found || h.Fence() != 1 {
		t.Error("no lease object on tmpfs")
	}
}

func TestConfigCheck(t *testing.T) {
	for _, c := range []struct {
		mod  func(*Config)
		want string
	}{
		{func(c *Config) { c.TTL = 0 }, "lease.ttl"},
		{func(c *Config) { c.TTL = MaxTTL + time.Millisecond }, "at most 168h0m0s"},
		{func(c *Config) { c.TTL = 2562047*time.Hour + 46*time.Minute + 47*time.Second }, "at most 168h0m0s"},
		{func(c *Config) { c.Skew = c.TTL }, "lease.skew"},
		{func(c *Config) { c.RenewEvery = c.TTL }, "lease.renew_every"},
		{func(c *Config) { c.Wait = -time.Second }, "lease.wait"},
		{func(c *Config) { c.Node = "a/b" }, "lease.node"},
		{func(c *Config) { c.Coordination = "maybe" }, "lease.coordination"},
	} {
		cfg := DefaultConfig()
		c.mod(&cfg)
		err := cfg.Check()
		if !errors.Is(err, store.ErrConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.want, err)
		}
	}
	d := DefaultConfig()
	if err := d.Check(); err != nil || d.Renewal() != 200*time.Second {
		t.Errorf("defaults: %v, renewal %s", err, d.Renewal())
	}
	d.FromEnv(func(k string) string { return map[string]string{EnvNodeID: "pod-7"}[k] })
	if d.Node != "pod-7" {
		t.Errorf("node %q from %s", d.Node, EnvNodeID)
	}
}

// probeCounter counts the puts of probe sentinels.
type probeCounter struct {
	driver.Bucket
	n *atomic.Int64
}

func (b probeCounter) Unwrap() driver.Bucket { return b.Bucket }

func (b probeCounter) Put(ctx context.Context, key string, body io.Reader, o *driver.PutOptions) (driver.ObjectInfo, error) {
	if strings.HasPrefix(key, probe.Prefix) {
		b.n.Add(1)
	}
	return b.Bucket.Put(ctx, key, body, o)
}

// TestOpenRemembersVerdict: with Verdicts, the first Open probes and remembers the store's
// cas verdict, and a second Open (another process's, sharing the file) trusts it and sends
// no probe request.
func TestOpenRemembersVerdict(t *testing.T) {
	ctx := t.Context()
	var n atomic.Int64
	s, err := store.Open(ctx, "mem://lease-verdicts", &store.Config{Wrap: func(b driver.Bucket) driver.Bucket {
		return probeCounter{Bucket: b, n: &n}
	}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "probes.json")
	for i, wantProbes := range []int64{1, 0} {
		n.Store(0)
		l, err := Open(ctx, s, testConfig("n1"), &Options{Verdicts: &probe.Verdicts{Path: path}})
		if err != nil {
			t.Fatal(err)
		}
		if l.Mode() != ModeBucket || (n.Load() > 0) != (wantProbes > 0) {
			t.Fatalf("Open %d: mode %s, %d probe sentinel put(s); want bucket leases and probing only the first time", i+1, l.Mode(), n.Load())
		}
		mustAcquire(t, machine{Leaser: l}, fmt.Sprintf("job-%d", i))
	}
}
