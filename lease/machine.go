package lease

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/wharfdata/wharf/internal/flock"
)

// machineLock is a machine lease: an exclusive lock on a file of this machine, held by this
// process until it unlocks it or exits (the kernel drops it then, even on SIGKILL).
type machineLock struct {
	f *os.File
}

// lockPath is the lock file of lease name in the store: one per store location and name.
func (l *Leaser) lockPath(name string) string {
	dir := l.cfg.LockDir
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "wharf-leases")
	}
	sum := sha256.Sum256([]byte(l.s.Describe().Location + "\x00" + name))
	return filepath.Join(dir, name+"-"+hex.EncodeToString(sum[:8])+".lock")
}

// acquireMachine takes the machine lease name: this machine's lock file, and the lease
// record's fence and log head as they are (nothing is written to the store). A lock another process holds fails
// *HeldError naming it.
func (l *Leaser) acquireMachine(ctx context.Context, name string, want func(json.RawMessage) error) (*Lease, error) {
	path := l.lockPath(name)
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return nil, fmt.Errorf("machine lease %q: %w", name, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, fmt.Errorf("machine lease %q: %w", name, err)
	}
	held, err := flock.TryLock(f, true)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("machine lease %q: locking %s: %w", name, path, err)
	}
	if held {
		who, _ := os.ReadFile(path)
		f.Close()
		return nil, &HeldError{Name: name, Holder: "another process on this machine (" + strings.TrimSpace(string(who)) + ")"}
	}
	_ = f.Truncate(0)
	_, _ = fmt.Fprintf(f, "pid %d, node %s\n", os.Getpid(), l.cfg.Node)
	st, err := readRecord(ctx, l.kv, name)
	if err != nil {
		flock.Unlock(f)
		f.Close()
		return nil, err
	}
	if want != nil {
		if err := want(st.rec.State); err != nil {
			flock.Unlock(f)
			f.Close()
			return nil, err
		}
	}
	rec := st.rec
	if !st.found {
		// A record this lease's commits create: it names no holder.
		rec = Record{Name: name, Fence: rec.Fence, Released: true, TTLMillis: l.cfg.TTL.Milliseconds(),
			Kind: rec.Kind, Seq: rec.Seq, Head: rec.Head}
	}
	h := newLease(l, name, rec, st.rev)
	h.machine = &machineLock{f: f}
	l.log.Info("lease: acquired a machine lease", "lease", name, "lock", path, "fence", h.fence)
	return h, nil
}

func (m *machineLock) unlock() error {
	flock.Unlock(m.f)
	return m.f.Close()
}
