package backfill

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/wharfdata/wharf/errcode"
)

// Coordinator keeps one job's records: small values under slash-separated keys ("leader",
// "current", "splits/<id>", "state/<id>", "plan/<id>/<page>"), each with a revision that
// changes on every write, and writes conditional on it. Everything a fleet agrees on — the
// plan, who leads, who holds which split, how far each split got — is one of these records,
// and every change to one is a compare-and-set, so a worker whose lease was taken over can
// no longer commit. The three coordinators (solo, the bucket, NATS JetStream key-value) pass
// the same conformance tests (CoordinatorSuite).
type Coordinator interface {
	// Get returns the record at key and its revision; ErrNoRecord when there is none.
	Get(ctx context.Context, key string) (value []byte, rev string, err error)
	// Create writes key only if it has no record: ErrConflict when it has one.
	Create(ctx context.Context, key string, value []byte) (rev string, err error)
	// Update replaces key only if its revision is still rev: ErrConflict otherwise (another
	// writer got there first, or the record is gone).
	Update(ctx context.Context, key string, value []byte, rev string) (newRev string, err error)
	// Durable reports whether the records outlive this process (false for solo).
	Durable() bool
	// Describe names the coordinator and the job's place in it, without any secret.
	Describe() string
	Close() error
}

// The answers of a Coordinator that are not failures of it.
var (
	ErrNoRecord = errors.New("no such record")
	ErrConflict = errors.New("revision conflict: another writer changed the record")
)

// Solo is the in-process coordinator: correct for one process, but its records die with it,
// so a restart replays the prefix.
type Solo struct {
	mu   sync.Mutex
	recs map[string]soloRec
	next uint64
}

type soloRec struct {
	value []byte
	rev   uint64
}

// NewSolo returns an empty in-process coordinator.
func NewSolo() *Solo { return &Solo{recs: map[string]soloRec{}} }

var _ Coordinator = (*Solo)(nil)

// Get implements Coordinator.
func (s *Solo) Get(ctx context.Context, key string) ([]byte, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.recs[key]
	if !ok {
		return nil, "", ErrNoRecord
	}
	return append([]byte(nil), r.value...), strconv.FormatUint(r.rev, 10), ctx.Err()
}

// Create implements Coordinator.
func (s *Solo) Create(ctx context.Context, key string, value []byte) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.recs[key]; ok {
		return "", ErrConflict
	}
	return s.put(key, value), nil
}

// Update implements Coordinator.
func (s *Solo) Update(ctx context.Context, key string, value []byte, rev string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.recs[key]
	if !ok || strconv.FormatUint(r.rev, 10) != rev {
		return "", ErrConflict
	}
	return s.put(key, value), nil
}

func (s *Solo) put(key string, value []byte) string {
	s.next++
	s.recs[key] = soloRec{value: append([]byte(nil), value...), rev: s.next}
	return strconv.FormatUint(s.next, 10)
}

// Durable implements Coordinator: solo's records die with the process.
func (s *Solo) Durable() bool { return false }

// Describe implements Coordinator.
func (s *Solo) Describe() string { return "solo (in-process)" }

// Close implements Coordinator.
func (s *Solo) Close() error { return nil }

// coordErr wraps a failure of the coordinator, naming it and the record.
func coordErr(c Coordinator, op, key string, err error) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if errcode.Of(err) != nil {
		return fmt.Errorf("%s %s record %q: %w", c.Describe(), op, key, err)
	}
	return errcode.E(op, fmt.Sprintf("%s record %q", c.Describe(), key), ErrCoordinator, err)
}

// getJSON reads key into v; found is false (and err nil) when there is no record.
func getJSON(ctx context.Context, c Coordinator, key string, v any) (rev string, found bool, err error) {
	b, rev, err := c.Get(ctx, key)
	if errors.Is(err, ErrNoRecord) {
		return "", false, nil
	}
	if err != nil {
		return "", false, coordErr(c, "get", key, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return "", false, coordErr(c, "decode", key, fmt.Errorf("not a backfill record: %w", err))
	}
	return rev, true, nil
}

// putJSON writes v at key: created when rev is "", else updated at rev. A conflict is
// returned as ErrConflict, unwrapped.
func putJSON(ctx context.Context, c Coordinator, key string, v any, rev string) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	var newRev string
	if rev == "" {
		newRev, err = c.Create(ctx, key, b)
	} else {
		newRev, err = c.Update(ctx, key, b, rev)
	}
	if errors.Is(err, ErrConflict) {
		return "", ErrConflict
	}
	return newRev, coordErr(c, "write", key, err)
}

// Record keys.
const (
	keyLeader  = "leader"
	keyCurrent = "current"
)

func keySplit(id string) string { return "splits/" + id }
func keyState(id string) string { return "state/" + id }
func keyPlan(id string) string  { return "plans/" + id }
func keyPage(id string, page int) string {
	return "plans/" + id + "/" + fmt.Sprintf("%06d", page)
}

// ValidKey reports whether key is one a backfill writes: slash-separated segments of
// letters, digits, '_' and '-'. Coordinators may rely on it.
func ValidKey(key string) bool {
	if key == "" {
		return false
	}
	for seg := range strings.SplitSeq(key, "/") {
		if seg == "" {
			return false
		}
		for _, r := range seg {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
				return false
			}
		}
	}
	return true
}
