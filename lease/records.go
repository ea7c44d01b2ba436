package lease

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/wharfdata/wharf/cas"
)

// Where the records live, below the store's root (the keys of the cas store).
const (
	LeasePrefix = "_wharf/leases/"
	LogPrefix   = "_wharf/log/"
	// PointerPrefix is where wharf kept each log's pointer before the lease record carried
	// it (record format 1). It is only read: the first acquisition of such a lease takes the
	// pointer's fence and head into the record.
	PointerPrefix = "_wharf/pointers/"
)

// LeaseKey is the key of the lease record of name.
func LeaseKey(name string) string { return LeasePrefix + name + ".json" }

// PointerKey is the key of name's pointer as wharf kept it before record format 2.
func PointerKey(name string) string { return PointerPrefix + name + ".json" }

// EntryKey is the key of the log entry seq that the holder of fence committed. One
// acquisition holds one fence, so a key is written by one writer only, whatever node ids
// are configured: entries of two holders never collide, and a holder fenced past leaves its
// entry beside the one that won, never over it.
func EntryKey(name string, seq, fence int64) string {
	return fmt.Sprintf("%s%s/%012d.f%d.json", LogPrefix, name, seq, fence)
}

// recordFormat is the format of the lease records this wharf writes: 2, the record carries
// the log's head (there is no pointer object).
const recordFormat = 2

// InlineMax bounds the size of a head entry that the lease record carries whole, so that an
// acquisition reads the log's head with the lease: larger ones are read from their own key.
const InlineMax = 256 << 10

// Record is the lease record: who holds it under which fence, and the head of its commit
// log. Every acquisition, renewal, commit and release replaces it under the revision its
// writer read or wrote last, so each of them is fenced by all the others. AcquiredAt and
// RenewedAt are the holder's wall clock, for people: no machine judges expiry by them.
type Record struct {
	Format     int       `json:"format"`
	Name       string    `json:"name"`
	Holder     string    `json:"holder"`
	Fence      int64     `json:"fence"`
	TTLMillis  int64     `json:"ttl_ms"`
	AcquiredAt time.Time `json:"acquired_at"`
	RenewedAt  time.Time `json:"renewed_at"`
	Released   bool      `json:"released"`
	// Nonce is random per write: no two writes have the same bytes (a revision may be the
	// bytes' hash).
	Nonce string `json:"nonce,omitempty"`
	// The log's head: the kind of its entries (set by the first commit), the head entry's
	// seq (0 before the first commit) and key.
	Kind string `json:"kind,omitempty"`
	Seq  int64  `json:"seq,omitempty"`
	Head string `json:"head,omitempty"`
	// HeadEntry is the head entry itself, when it is at most InlineMax bytes.
	HeadEntry *Entry `json:"head_entry,omitempty"`
	// State is what the holder last saved in the record itself (Lease.Save).
	State json.RawMessage `json:"state,omitempty"`
}

// MaxTTL bounds a lease's TTL (see Config.TTL).
const MaxTTL = 7 * 24 * time.Hour

// TTL is the record's TTL; one too large for a time.Duration is the largest.
func (r *Record) TTL() time.Duration {
	if r.TTLMillis > math.MaxInt64/int64(time.Millisecond) {
		return math.MaxInt64
	}
	return time.Duration(r.TTLMillis) * time.Millisecond
}

// Pointer is the head of the record's commit log.
func (r *Record) Pointer() Pointer {
	return Pointer{Name: r.Name, Kind: r.Kind, Fence: r.Fence, Seq: r.Seq, Head: r.Head}
}

// Pointer is the head of a commit log: the lease's fence, and the entry readers start from.
// Only what it names (and what that entry names, back to the first) is readable.
type Pointer struct {
	Name  string `json:"name"`
	Kind  string `json:"kind,omitempty"` // the kind of the log's entries, set by its first commit
	Fence int64  `json:"fence"`
	Seq   int64  `json:"seq"`            // the head entry's seq; 0 before the first commit
	Head  string `json:"head,omitempty"` // the head entry's key
}

// Entry is one commit of a log. Prev names the entry before it, so that a reader walks the
// log from the lease record without listing.
type Entry struct {
	Name  string          `json:"name"`
	Kind  string          `json:"kind"`
	Seq   int64           `json:"seq"`
	Fence int64           `json:"fence"`
	Node  string          `json:"node"`
	Prev  string          `json:"prev,omitempty"`
	Time  time.Time       `json:"time"` // the committer's wall clock, for people
	Data  json.RawMessage `json:"data,omitempty"`
	Key   string          `json:"-"`
}

func nonce() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// stored is a lease record as read: its revision, whether it exists, and its bytes.
type stored struct {
	rec   Record
	rev   string
	found bool
	raw   []byte
	// ptrRev is the revision of the format-1 pointer merged into rec; "" when there is none.
	ptrRev string
}

// readRecord reads the lease record of name. A record of format 1 (or none) takes the log's
// head and fence from the pointer object wharf kept then, when there is one.
func readRecord(ctx context.Context, kv cas.Store, name string) (stored, error) {
	var st stored
	raw, rev, err := kv.Get(ctx, LeaseKey(name))
	switch {
	case errors.Is(err, cas.ErrNoRecord):
	case err != nil:
		return st, err
	default:
		if err := json.Unmarshal(raw, &st.rec); err != nil {
			return st, fmt.Errorf("%s is not a wharf lease record: %w", LeaseKey(name), err)
		}
		st.rev, st.found, st.raw = rev, true, raw
		if st.rec.TTLMillis <= 0 {
			return st, fmt.Errorf("%s is not a wharf lease record: ttl_ms %d", LeaseKey(name), st.rec.TTLMillis)
		}
	}
	if st.found && st.rec.Format >= recordFormat {
		if e := st.rec.HeadEntry; e != nil {
			e.Key = st.rec.Head
		}
		return st, nil
	}
	var err2 error
	st.ptrRev, err2 = readPointer(ctx, kv, name, &st.rec)
	return st, err2
}

// readPointer merges the format-1 pointer of name into rec, if there is one, and returns its
// revision.
func readPointer(ctx context.Context, kv cas.Store, name string, rec *Record) (string, error) {
	raw, rev, err := kv.Get(ctx, PointerKey(name))
	if errors.Is(err, cas.ErrNoRecord) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	var p Pointer
	if err := json.Unmarshal(raw, &p); err != nil {
		return "", fmt.Errorf("%s is not a wharf pointer: %w", PointerKey(name), err)
	}
	rec.Fence = max(rec.Fence, p.Fence)
	rec.Kind, rec.Seq, rec.Head, rec.HeadEntry = p.Kind, p.Seq, p.Head, nil
	return rev, nil
}

// writeRecord writes rec (in format 2, with a fresh nonce) as the lease record of its name:
// created when rev is "", else updated at rev. conflict reports a failed condition; raw is
// what was written.
func writeRecord(ctx context.Context, kv cas.Store, rec *Record, rev string) (newRev string, raw []byte, conflict bool, err error) {
	rec.Format, rec.Nonce = recordFormat, nonce()
	if raw, err = json.Marshal(rec); err != nil {
		return "", nil, false, err
	}
	if rev == "" {
		newRev, err = kv.Create(ctx, LeaseKey(rec.Name), raw)
	} else {
		newRev, err = kv.Update(ctx, LeaseKey(rec.Name), raw, rev)
	}
	if errors.Is(err, cas.ErrConflict) {
		return "", raw, true, nil
	}
	return newRev, raw, false, err
}

// inline returns e for a record to carry whole, or nil when it is larger than InlineMax.
func inline(e *Entry, size int) *Entry {
	if size > InlineMax {
		return nil
	}
	return e
}
