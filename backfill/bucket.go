package backfill

import (
	"bytes"
	"context"
	"errors"
	"io"

	"github.com/wharfdata/wharf/store"
)

// BucketPrefix is where the bucket coordinator keeps a job, at the root of its store.
func BucketPrefix(job string) string { return "_wharf/backfill/" + job + "/" }

// Bucket is the coordinator in the bucket itself: each record is an object <key>.json
// below BucketPrefix, its revision the object's ETag (the generation on GCS), a create a put
// with If-None-Match and an update a put with If-Match. The job's leadership and each
// split's lease are such records: taken by a create or by a replace at the ETag a
// contender saw unchanged for the lease TTL on its own monotonic clock, with a fence one
// above the last, released by a replace and never deleted; every commit is a replace at the
// ETag the holder wrote last, so a holder that was taken over cannot commit. It needs a
// store that enforces conditional writes: check it with the probe (store/probe) first.
//
// A conditional put whose answer was lost is settled by one HEAD (the put's wharf-put-id):
// ours means it landed.
type Bucket struct {
	s     *store.Store
	where string
}

var _ Coordinator = (*Bucket)(nil)

// NewBucket returns the coordinator of the job whose records are below s (a store opened
// at BucketPrefix(job)).
func NewBucket(s *store.Store) *Bucket {
	return &Bucket{s: s, where: "bucket " + s.Describe().Location}
}

func objectKey(key string) string { return key + ".json" }

// Get implements Coordinator.
func (b *Bucket) Get(ctx context.Context, key string) ([]byte, string, error) {
	obj, err := b.s.Get(ctx, objectKey(key), nil)
	if errors.Is(err, store.ErrNotExist) {
		return nil, "", ErrNoRecord
	}
	if err != nil {
		return nil, "", err
	}
	defer obj.Close()
	v, err := io.ReadAll(io.LimitReader(obj, 64<<20))
	return v, obj.Info.ETag, err
}

// Create implements Coordinator.
func (b *Bucket) Create(ctx context.Context, key string, value []byte) (string, error) {
	return b.put(ctx, key, value, &store.PutOptions{IfNoneMatch: true})
}

// Update implements Coordinator.
func (b *Bucket) Update(ctx context.Context, key string, value []byte, rev string) (string, error) {
	if rev == "" {
		return "", ErrConflict
	}
	return b.put(ctx, key, value, &store.PutOptions{IfMatch: rev})
}

func (b *Bucket) put(ctx context.Context, key string, value []byte, o *store.PutOptions) (string, error) {
	if !ValidKey(key) {
		return "", errors.New("invalid record key " + key)
	}
	o.Size, o.ContentType = int64(len(value)), "application/json"
	for range 3 {
		info, err := b.s.Put(ctx, objectKey(key), bytes.NewReader(value), o)
		var se *store.Error
		switch {
		case err == nil:
			return info.ETag, nil
		case errors.Is(err, store.ErrPreconditionFailed):
			return "", ErrConflict
		case !errors.Is(err, store.ErrOutcomeUnknown) || !errors.As(err, &se):
			return "", err
		}
		got, landed, rerr := b.s.ResolvePut(ctx, objectKey(key), se.PutID)
		switch {
		case rerr != nil && !errors.Is(rerr, store.ErrNotExist):
			return "", rerr
		case landed:
			return got.ETag, nil
		case o.IfNoneMatch && rerr == nil, o.IfMatch != "" && got.ETag != o.IfMatch:
			return "", ErrConflict // another writer's record is there
		}
		o.Metadata = nil // our put did not land: try again with a fresh put-id
	}
	return "", errors.New("conditional put of " + key + ": outcome unknown three times")
}

// Durable implements Coordinator.
func (b *Bucket) Durable() bool { return true }

// Describe implements Coordinator.
func (b *Bucket) Describe() string { return b.where }

// Close implements Coordinator: the store is the caller's.
func (b *Bucket) Close() error { return nil }
