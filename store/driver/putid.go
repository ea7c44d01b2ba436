package driver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
)

// NewPutID returns a random wharf-put-id: 16 random bytes as hex.
func NewPutID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ResolvePut settles a put whose answer was lost (ErrOutcomeUnknown, or ErrPreconditionFailed
// after a resend) by one head of key: when the object there carries putID in its
// wharf-put-id metadata, the put landed and ResolvePut returns its info and true. An absent
// object, or one with another put-id, means it did not land.
func ResolvePut(ctx context.Context, head func(context.Context, string) (ObjectInfo, error), key, putID string) (ObjectInfo, bool, error) {
	info, err := head(ctx, key)
	if errors.Is(err, ErrNotExist) {
		return ObjectInfo{}, false, nil
	}
	if err != nil {
		return ObjectInfo{}, false, err
	}
	return info, putID != "" && info.Metadata[MetaPutID] == putID, nil
}
