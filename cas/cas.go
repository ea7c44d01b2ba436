package cas

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/store"
)

// Store keeps records under slash-separated keys, each with a revision, and writes them
// conditionally on it (see the package doc for what every implementation promises).
type Store interface {
	// Get returns the record at key and its revision; ErrNoRecord when there is none.
	Get(ctx context.Context, key string) (value []byte, rev string, err error)
	// Create writes key only if it has no record: ErrConflict when it has one.
	Create(ctx context.Context, key string, value []byte) (rev string, err error)
	// Update replaces key only if its revision is still rev: ErrConflict otherwise (another
	// writer got there first, or there is no record).
	Update(ctx context.Context, key string, value []byte, rev string) (newRev string, err error)
	// Describe names the store and where its records are, without any secret.
	Describe() string
}

// The answers of a Store that are not failures of it.
var (
	ErrNoRecord = errors.New("no such record")
	ErrConflict = errors.New("revision conflict: another writer changed the record")
)

// MaxKey bounds a key's length in bytes.
const MaxKey = 1024

// MaxValue bounds what Bucket reads of a record.
const MaxValue = 64 << 20

// CheckKey returns nil for a key every implementation can hold: 1 to MaxKey bytes of
// segments separated by '/', each of ASCII letters, digits, '.', '_' or '-', none empty,
// "." or "..". Otherwise store.ErrConfig naming the key.
func CheckKey(key string) error {
	bad := func(why string) error {
		return errcode.E("key", fmt.Sprintf("%q", key), store.ErrConfig, errors.New(why))
	}
	if key == "" || len(key) > MaxKey {
		return bad(fmt.Sprintf("a record key is 1 to %d bytes", MaxKey))
	}
	for seg := range strings.SplitSeq(key, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return bad("a record key has no empty, \".\" or \"..\" segment and no leading or trailing '/'")
		}
		for i := 0; i < len(seg); i++ {
			if c := seg[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
				return bad("a record key holds only ASCII letters, digits, '.', '_', '-' and '/'")
			}
		}
	}
	return nil
}
