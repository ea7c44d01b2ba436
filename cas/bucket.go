package cas

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/store"
)

// Bucket is a Store in a *store.Store: each record the object at its key (a key is used as
// it is, so wharf names its records …/NAME.json), its revision the object's ETag (the
// generation on GCS), a create a put under If-None-Match and an update a put under If-Match
// on the revision. It enforces nothing itself: give it a store the probe proved cas.
//
// A value larger than MaxValue, which Get would refuse, is refused before anything is sent
// (store.ErrConfig). Every write carries a random wharf-put-id. An answer lost on the way back, or a failed
// condition after the store's retry policy sent the write again (a throttled attempt may have
// applied), is settled by one HEAD: one of this write's put-ids there means it landed. A
// write that did not land is sent again, with a fresh put-id, while its condition still holds
// (at most three times); a definitive failed condition costs no read.
type Bucket struct {
	s *store.Store
}

var _ Store = (*Bucket)(nil)

// NewBucket returns the Store of the records in s.
func NewBucket(s *store.Store) *Bucket { return &Bucket{s: s} }

// Store is the store the records are in.
func (b *Bucket) Store() *store.Store { return b.s }

// Describe implements Store.
func (b *Bucket) Describe() string { return "bucket " + b.s.Describe().Location }

// readTries bounds the reads of a record that other writers keep replacing while it is read.
const readTries = 8

// writeTries bounds the sends of one write whose answers are lost.
const writeTries = 3

// Get implements Store. A record replaced while it was read (GCS reads the generation it
// first saw, and refuses to splice two) is read again.
func (b *Bucket) Get(ctx context.Context, key string) (value []byte, rev string, err error) {
	if err := begin(ctx, key); err != nil {
		return nil, "", err
	}
	for range readTries - 1 {
		value, rev, err = b.get(ctx, key)
		if !errors.Is(err, store.ErrPreconditionFailed) {
			return value, rev, err
		}
	}
	return b.get(ctx, key)
}

func (b *Bucket) get(ctx context.Context, key string) ([]byte, string, error) {
	obj, err := b.s.Get(ctx, key, nil)
	if errors.Is(err, store.ErrNotExist) {
		return nil, "", ErrNoRecord
	}
	if err != nil {
		return nil, "", err
	}
	defer obj.Close()
	v, err := io.ReadAll(io.LimitReader(obj, MaxValue+1))
	if err != nil {
		return nil, "", err
	}
	if len(v) > MaxValue {
		return nil, "", errcode.E("get", key, store.ErrConfig, fmt.Errorf("larger than %d bytes: not a record wharf wrote", MaxValue))
	}
	return v, obj.Info.ETag, nil
}

// Create implements Store.
func (b *Bucket) Create(ctx context.Context, key string, value []byte) (string, error) {
	if err := begin(ctx, key); err != nil {
		return "", err
	}
	return b.put(ctx, key, value, store.PutOptions{IfNoneMatch: true})
}

// Update implements Store.
func (b *Bucket) Update(ctx context.Context, key string, value []byte, rev string) (string, error) {
	if err := begin(ctx, key); err != nil {
		return "", err
	}
	if rev == "" {
		return "", ErrConflict
	}
	return b.put(ctx, key, value, store.PutOptions{IfMatch: rev})
}

func (b *Bucket) put(ctx context.Context, key string, value []byte, o store.PutOptions) (string, error) {
	if len(value) > MaxValue { // Get would refuse it: a record no one could read again
		return "", errcode.E("put", key, store.ErrConfig, fmt.Errorf("%d bytes: a record is at most %d", len(value), MaxValue))
	}
	o.Size, o.ContentType = int64(len(value)), "application/octet-stream"
	if json.Valid(value) {
		o.ContentType = "application/json"
	}
	var ids []string
	var last error
	for try := range writeTries {
		id := newPutID()
		ids = append(ids, id)
		o.Metadata = map[string]string{store.MetaPutID: id}
		info, err := b.s.Put(ctx, key, bytes.NewReader(value), &o)
		switch {
		case err == nil:
			return info.ETag, nil
		case ctx.Err() != nil:
			return "", ctx.Err()
		case errors.Is(err, store.ErrPreconditionFailed) && try == 0 && !resent(err):
			return "", ErrConflict // a definitive answer to the only send
		case !errors.Is(err, store.ErrPreconditionFailed) && !errors.Is(err, store.ErrOutcomeUnknown):
			return "", err
		}
		info, landed, err2 := b.resolve(ctx, key, ids)
		switch {
		case err2 != nil:
			return "", errors.Join(err, err2)
		case landed:
			return info.ETag, nil
		case errors.Is(err, store.ErrPreconditionFailed),
			o.IfNoneMatch && info.ETag != "",
			o.IfMatch != "" && info.ETag != o.IfMatch:
			return "", ErrConflict // another writer's record is there
		}
		last = err // it did not land and its condition still holds: send it again
	}
	return "", fmt.Errorf("%w (read back after each of %d sends: none landed)", last, writeTries)
}

// resolve reads key's put-id: one of ids means one of this write's sends landed. An absent
// object is a zero info.
func (b *Bucket) resolve(ctx context.Context, key string, ids []string) (store.ObjectInfo, bool, error) {
	info, err := b.s.Head(ctx, key)
	if errors.Is(err, store.ErrNotExist) {
		return store.ObjectInfo{}, false, nil
	}
	if err != nil {
		return store.ObjectInfo{}, false, err
	}
	return info, slices.Contains(ids, info.Metadata[store.MetaPutID]), nil
}

// resent reports whether the store's retry policy sent the write more than once before the
// answer err (an earlier, throttled attempt may have applied).
func resent(err error) bool {
	var se *store.Error
	return errors.As(err, &se) && se.Attempts > 1
}

func newPutID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
