package lease

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/wharfdata/wharf/store"
)

// Where the objects live, below the store's root.
const (
	LeasePrefix   = "_wharf/leases/"
	PointerPrefix = "_wharf/pointers/"
	LogPrefix     = "_wharf/log/"
)

// LeaseKey is the key of the lease object of name.
func LeaseKey(name string) string { return LeasePrefix + name + ".json" }

// PointerKey is the key of the pointer of name's commit log.
func PointerKey(name string) string { return PointerPrefix + name + ".json" }

// EntryKey is the key of the log entry seq that the holder of fence committed. One
// acquisition holds one fence, so a key is written by one writer only, whatever node ids
// are configured: entries of two holders never collide, and a holder fenced past leaves its
// entry beside the one that won, never over it.
func EntryKey(name string, seq, fence int64) string {
	return fmt.Sprintf("%s%s/%012d.f%d.json", LogPrefix, name, seq, fence)
}

// Record is the lease object: who holds it under which fence. AcquiredAt and RenewedAt are
// the holder's wall clock, for people: no machine judges expiry by them.
type Record struct {
	Name       string    `json:"name"`
	Holder     string    `json:"holder"`
	Fence      int64     `json:"fence"`
	TTLMillis  int64     `json:"ttl_ms"`
	AcquiredAt time.Time `json:"acquired_at"`
	RenewedAt  time.Time `json:"renewed_at"`
	Released   bool      `json:"released"`
	// Log is the pointer as the holder that released the lease left it, with its ETag: the
	// next acquisition raises the pointer under If-Match on that ETag without reading it
	// first, and reads it only when the hint is stale (the If-Match fails).
	Log *PointerHint `json:"log,omitempty"`
}

// PointerHint is a pointer and its ETag, as a releasing holder last wrote or read it.
type PointerHint struct {
	Pointer
	ETag string `json:"etag"`
}

// TTL is the record's TTL.
func (r *Record) TTL() time.Duration { return time.Duration(r.TTLMillis) * time.Millisecond }

// Pointer is the head of a commit log: the highest fence that acquired the lease, and the
// entry readers start from. Only what it names (and what that entry names, back to the
// first) is readable.
type Pointer struct {
	Name  string `json:"name"`
	Kind  string `json:"kind,omitempty"` // the kind of the log's entries, set by its first commit
	Fence int64  `json:"fence"`
	Seq   int64  `json:"seq"`            // the head entry's seq; 0 before the first commit
	Head  string `json:"head,omitempty"` // the head entry's key
}

// Entry is one commit of a log. Prev names the entry before it, so that a reader walks the
// log from the pointer without listing.
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

// newPutID returns a random put-id for a conditional write, so that a lost answer (or a 412
// after one) is settled by reading the put-id back.
func newPutID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// written is what a conditional write did: the new ETag, or failed when its condition did
// not hold.
type written struct {
	etag   string
	failed bool
}

// putJSON writes v at key under the condition in o. A condition that did not hold is
// (failed, nil); a lost answer is settled by reading back the put-id, never by sending the
// write again: landed is success, not landed is the store's error.
func putJSON(ctx context.Context, s *store.Store, key string, v any, o store.PutOptions) (written, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return written{}, err
	}
	id := newPutID()
	o.Size, o.ContentType = int64(len(b)), "application/json"
	o.Metadata = map[string]string{store.MetaPutID: id}
	info, err := s.Put(ctx, key, bytes.NewReader(b), &o)
	switch {
	case err == nil:
		return written{etag: info.ETag}, nil
	case errors.Is(err, store.ErrPreconditionFailed), errors.Is(err, store.ErrOutcomeUnknown):
		// A 412 can follow a throttled attempt that did apply: the put-id tells.
		got, landed, herr := s.ResolvePut(ctx, key, id)
		if herr == nil && landed {
			return written{etag: got.ETag}, nil
		}
		if errors.Is(err, store.ErrPreconditionFailed) {
			return written{failed: true}, nil
		}
		if herr != nil {
			return written{}, errors.Join(err, herr)
		}
		return written{}, fmt.Errorf("%w (read back: it did not land)", err)
	}
	return written{}, err
}

// maxObject bounds what is read of a lease object, pointer or entry.
const maxObject = 64 << 20

// readTries bounds the reads of an object that another writer keeps replacing while it is
// read.
const readTries = 8

// getJSON reads key into v and returns its ETag; found is false when it is absent. An object
// replaced while it was read (the store refuses to splice two versions: GCS reads the
// generation it first saw) is read again.
func getJSON(ctx context.Context, s *store.Store, key string, v any) (etag string, found bool, err error) {
	for range readTries - 1 {
		etag, found, err = getOnce(ctx, s, key, v)
		if !errors.Is(err, store.ErrPreconditionFailed) {
			return etag, found, err
		}
	}
	return getOnce(ctx, s, key, v)
}

func getOnce(ctx context.Context, s *store.Store, key string, v any) (etag string, found bool, err error) {
	obj, err := s.Get(ctx, key, nil)
	if errors.Is(err, store.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	defer obj.Close()
	b, err := io.ReadAll(io.LimitReader(obj, maxObject))
	if err != nil {
		return "", false, err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return "", false, fmt.Errorf("%s is not a wharf lease object: %w", key, err)
	}
	return obj.Info.ETag, true, nil
}
