package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/internal/atomicfile"
	"github.com/wharfdata/wharf/internal/flock"
	"github.com/wharfdata/wharf/store"
)

// DefaultMaxAge is how long a remembered verdict is trusted before the store is probed again.
const DefaultMaxAge = 24 * time.Hour

// Verdicts remembers what the probe found, per store: its scheme, bucket (or container,
// or directory) and endpoint, so that a proxy in front of a server that enforces conditions
// is a store of its own. They are kept in one small JSON file, rewritten whole under a lock
// on a file beside it (NAME.lock), so that two processes recording at once never undo each
// other's verdicts. A Verdicts is for one process.
type Verdicts struct {
	Path   string           // the file; its directory is made when needed
	MaxAge time.Duration    // 0 means DefaultMaxAge
	Now    func() time.Time // nil means time.Now
}

// Verdict is what Verdicts remembers of one probe.
type Verdict struct {
	Store             string    `json:"store"` // StoreKey of the store probed
	Coordination      string    `json:"coordination"`
	ConditionalCreate string    `json:"conditional_create"` // Yes, No or Inconclusive
	Reason            string    `json:"reason"`
	ProbedAt          time.Time `json:"probed_at"`
	// Unchecked counts the uses of a cas verdict since it was recorded or last checked
	// (see Count).
	Unchecked int `json:"unchecked,omitempty"`
}

// StoreKey names a store as Verdicts files it: the root of its location, at its endpoint.
func StoreKey(d store.Description) string {
	root := d.Location
	if loc, err := store.ParseURL(d.Location); err == nil {
		root = loc.Root().String()
	}
	if d.Endpoint == "" {
		return root
	}
	return root + " at " + d.Endpoint
}

func (v *Verdicts) now() time.Time {
	if v.Now != nil {
		return v.Now()
	}
	return time.Now()
}

// Lookup returns the verdict remembered for d, if one is fresh.
func (v *Verdicts) Lookup(d store.Description) (Verdict, bool) {
	all, _ := v.load()
	return v.fresh(all, d)
}

func (v *Verdicts) fresh(all map[string]Verdict, d store.Description) (Verdict, bool) {
	e, ok := all[StoreKey(d)]
	maxAge := v.MaxAge
	if maxAge == 0 {
		maxAge = DefaultMaxAge
	}
	if !ok || v.now().Sub(e.ProbedAt) > maxAge || e.ProbedAt.After(v.now().Add(time.Minute)) {
		return Verdict{}, false
	}
	return e, true
}

// Record remembers r.
func (v *Verdicts) Record(r *Result) error {
	return v.update(func(all map[string]Verdict) bool {
		key := StoreKey(r.Store)
		if cc := r.Capabilities[CapConditionalCreate].Verdict; cc == Inconclusive {
			// A store that did not answer showed nothing: forget what an earlier probe found
			// rather than remember a verdict that would refuse until it goes stale.
			delete(all, key)
		} else {
			all[key] = Verdict{Store: key, Coordination: r.Coordination, Reason: r.Reason,
				ConditionalCreate: cc, ProbedAt: v.now().UTC()}
		}
		return true
	})
}

// Count counts one use of d's remembered cas verdict (an acquisition of a lease that trusted
// it) and reports whether this use must check that the store still enforces conditions: the
// every-th since the verdict was recorded or last Checked, counted across every process that
// shares the file. ok is false when there is no fresh cas verdict for d, or the file could not
// be written (the caller then counts in its process).
func (v *Verdicts) Count(d store.Description, every int) (due, ok bool) {
	err := v.update(func(all map[string]Verdict) bool {
		e, fresh := v.fresh(all, d)
		if !fresh || e.Coordination != CAS {
			return false
		}
		e.Unchecked++
		due, ok = e.Unchecked >= every, true
		all[StoreKey(d)] = e
		return true
	})
	if errors.Is(err, errBusy) {
		return true, true // the file is held too long: check rather than miss a count
	}
	return due, ok && err == nil
}

// Checked records that a use of d's verdict found the store still enforcing conditions: the
// count of Count starts again.
func (v *Verdicts) Checked(d store.Description) {
	_ = v.update(func(all map[string]Verdict) bool {
		e, ok := all[StoreKey(d)]
		if !ok || e.Unchecked == 0 {
			return false
		}
		e.Unchecked = 0
		all[StoreKey(d)] = e
		return true
	})
}

// Forget drops what is remembered of d: the next use probes it again.
func (v *Verdicts) Forget(d store.Description) error {
	return v.update(func(all map[string]Verdict) bool {
		if _, ok := all[StoreKey(d)]; !ok {
			return false
		}
		delete(all, StoreKey(d))
		return true
	})
}

// errBusy: another process held the verdicts file's lock for longer than lockWait.
var errBusy = errors.New("the probe verdicts file is locked by another process")

// lockWait bounds the wait for the verdicts file's lock.
const lockWait = 2 * time.Second

// update applies change to the remembered verdicts and writes them back when it reports a
// change, under an exclusive lock on a file beside them (where locks exist), so that two
// processes never undo each other's verdicts or counts.
func (v *Verdicts) update(change func(map[string]Verdict) bool) error {
	if err := os.MkdirAll(filepath.Dir(v.Path), 0o700); err != nil {
		return fmt.Errorf("remembering the probe verdict: %w", err)
	}
	unlock, err := lockFile(v.Path + ".lock")
	if err != nil {
		return err
	}
	defer unlock()
	all, err := v.load()
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		all = map[string]Verdict{} // an unreadable cache is replaced, not trusted
	}
	if all == nil {
		all = map[string]Verdict{}
	}
	if !change(all) {
		return nil
	}
	body, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	if _, err := atomicfile.Write(context.Background(), v.Path, bytes.NewReader(append(body, '\n')), false); err != nil {
		return fmt.Errorf("remembering the probe verdict in %s: %w", v.Path, err)
	}
	return nil
}

// lockFile takes an exclusive lock on path, waiting at most lockWait; where the platform has
// no file locks it takes none.
func lockFile(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("locking the probe verdicts: %w", err)
	}
	for deadline := time.Now().Add(lockWait); ; time.Sleep(5 * time.Millisecond) {
		busy, err := flock.TryLock(f, true)
		switch {
		case errors.Is(err, flock.ErrUnsupported):
			return func() { f.Close() }, nil
		case err != nil:
			f.Close()
			return nil, fmt.Errorf("locking the probe verdicts: %w", err)
		case !busy:
			return func() { flock.Unlock(f); f.Close() }, nil
		case time.Now().After(deadline):
			f.Close()
			return nil, errBusy
		}
	}
}

func (v *Verdicts) load() (map[string]Verdict, error) {
	b, err := os.ReadFile(v.Path)
	if err != nil {
		return nil, err
	}
	all := map[string]Verdict{}
	if err := json.Unmarshal(b, &all); err != nil {
		return nil, fmt.Errorf("%s: %w", v.Path, err)
	}
	return all, nil
}

// RequireCreate returns nil when s is proven to refuse a second create-if-absent: by a fresh
// remembered verdict, else by probing at (a store under s's bucket the caller may write, such
// as the destination's directory) and remembering what it found (a file that cannot be
// written only means the next run probes again). Otherwise it returns an
// ErrCoordinationUnproven error that says what the probe saw and when. probed reports whether
// it ran the probe.
func (v *Verdicts) RequireCreate(ctx context.Context, s, at *store.Store) (probed bool, err error) {
	d := s.Describe()
	e, ok := v.Lookup(d)
	if !ok {
		r, err := Run(ctx, at, nil)
		if err != nil {
			return true, err
		}
		r.Store = d // filed under the bucket, whatever prefix it ran in
		_ = v.Record(r)
		if c := r.Capabilities[CapConditionalCreate]; c.Verdict == Inconclusive {
			// The store failed the probe's requests: that failure (the store unavailable,
			// credentials refused) is the answer, not a verdict about conditions.
			if k, ok := errcode.Lookup(c.Cause); ok {
				return true, &store.Error{Op: "if-absent", Key: StoreKey(d), Kind: k,
					Err: fmt.Errorf("the probe could not show whether the store enforces create-if-absent: %s", c.Evidence)}
			}
		}
		e = Verdict{Coordination: r.Coordination, Reason: r.Reason,
			ConditionalCreate: r.Capabilities[CapConditionalCreate].Verdict, ProbedAt: v.now().UTC()}
		probed = true
	}
	if e.ConditionalCreate == Yes {
		return probed, nil
	}
	return probed, &store.Error{Op: "if-absent", Key: StoreKey(d), Kind: ErrCoordinationUnproven,
		Err: fmt.Errorf("the probe of %s found conditional_create %q (%s): a create-if-absent there may replace an existing object",
			e.ProbedAt.Format(time.RFC3339), e.ConditionalCreate, e.Reason)}
}

// Coordination returns what s guarantees for coordination. A fresh remembered cas verdict
// for s's bucket at its endpoint is trusted without a probe (Result.Remembered then holds
// when it was probed, and the result carries no capabilities); otherwise the probe runs in
// s now and what it found is remembered. A local directory is always probed: that costs no
// request, and its mount can change. A nil v always probes and remembers nothing.
func (v *Verdicts) Coordination(ctx context.Context, s *store.Store) (*Result, error) {
	d := s.Describe()
	if v != nil && !d.Local() {
		if e, ok := v.Lookup(d); ok && e.Coordination == CAS {
			return &Result{Store: d, Coordination: CAS, Reason: e.Reason, Remembered: e.ProbedAt}, nil
		}
	}
	r, err := Run(ctx, s, nil)
	if err != nil {
		return nil, err
	}
	if v != nil {
		_ = v.Record(r) // a cache that cannot be written only means the next run probes again
	}
	return r, nil
}
