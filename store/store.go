package store

import (
	"context"
	"io"
	"time"
)

// Store is the contract every backend satisfies. Keys are relative to the store's root (the
// bucket and prefix of its URL), use '/' as separator, and are validated by ValidateKey before a
// backend sees them. Every method takes a context first; a cancelled context returns the
// context's error unwrapped, never one of the kinds below.
//
// Every failure is an *Error that unwraps (errors.Is) to exactly one kind: ErrNotExist,
// ErrPreconditionFailed, ErrBucketMissing, ErrForbidden, ErrUnsupported, ErrUnavailable,
// ErrOutcomeUnknown or ErrKeyInvalid.
type Store interface {
	// Get opens the object at key for reading. With opts.IfMatch set, the read is pinned: if the
	// object's current ETag differs, Get fails with ErrPreconditionFailed (a backend whose
	// server ignores the pin is caught by the caller comparing Object.Info.ETag). With
	// opts.Length > 0 (or opts.Offset > 0), only that byte range is returned. A missing key is
	// ErrNotExist; a missing bucket is ErrBucketMissing, never ErrNotExist.
	Get(ctx context.Context, key string, opts *GetOptions) (*Object, error)

	// Head returns the object's metadata without its body: ErrNotExist when absent,
	// ErrBucketMissing when the bucket itself is absent.
	Head(ctx context.Context, key string) (ObjectInfo, error)

	// Put writes body at key and returns what the store recorded (at least Key, Size and ETag).
	// opts.IfNoneMatch makes it create-if-absent; opts.IfMatch replace-if-match. A failed
	// condition is ErrPreconditionFailed whatever status the server used (412, 409, 404 on an
	// If-Match put). A conditional put whose answer was lost is ErrOutcomeUnknown; the caller
	// resolves it by one Head comparing MetaPutID. The object appears whole or not at all: a
	// failed or cancelled put leaves nothing at key (and no multipart upload open). A body
	// that is also an io.ReaderAt, with opts.Size given, may be read in place (ReadAt of each
	// part, in parallel, and again for a part resent) instead of through Read: a local file's
	// parts then need no buffers.
	Put(ctx context.Context, key string, body io.Reader, opts *PutOptions) (ObjectInfo, error)

	// Delete removes key. Deleting a missing key succeeds. With opts.IfMatch the delete is
	// conditional (ErrPreconditionFailed on a stale ETag) where the server enforces it; Probe
	// tells whether it does.
	Delete(ctx context.Context, key string, opts *DeleteOptions) error

	// List returns one page of the keys under opts.Prefix in sorted order. Pass Page.Next back
	// as opts.Token for the next page; an empty Next means the listing is complete. With
	// opts.Delimiter "/", keys below the next '/' are rolled up into Page.Prefixes. Use Walk to
	// follow every page.
	List(ctx context.Context, opts *ListOptions) (Page, error)

	// Close releases what the store holds (connections, files).
	Close() error
}

// ObjectInfo describes an object.
type ObjectInfo struct {
	Key          string            `json:"key"`
	Size         int64             `json:"size"`
	ETag         string            `json:"etag,omitempty"` // unquoted; the generation on GCS
	LastModified time.Time         `json:"last_modified,omitzero"`
	ContentType  string            `json:"content_type,omitempty"`
	Metadata     map[string]string `json:"metadata,omitempty"` // keys lowercase: "wharf-sha256"
}

// Object is an open object body. The caller must Close it.
type Object struct {
	Info ObjectInfo // Size is the whole object's size, even for a range read
	io.ReadCloser
}

// GetOptions modify Get. A nil *GetOptions reads the whole object unpinned.
type GetOptions struct {
	IfMatch string // pin: fail with ErrPreconditionFailed unless the ETag matches
	Offset  int64  // first byte to read
	Length  int64  // bytes to read from Offset; 0 means to the end
}

// PutOptions modify Put. At most one of IfNoneMatch and IfMatch may be set.
type PutOptions struct {
	IfNoneMatch bool   // create-if-absent
	IfMatch     string // replace only if the current ETag is this one
	// Size is the body's length in bytes, or -1 (or 0 with an unknown body) when unknown.
	// A body of unknown size is streamed in parts.
	Size        int64
	ContentType string
	Metadata    map[string]string
	// PartSize and Concurrency bound a multipart upload: at most Concurrency parts of PartSize
	// bytes are in memory at once. Zero means the backend's default.
	PartSize    int64
	Concurrency int
}

// Conditional reports whether the put carries a condition.
func (o *PutOptions) Conditional() bool { return o != nil && (o.IfNoneMatch || o.IfMatch != "") }

// DeleteOptions modify Delete.
type DeleteOptions struct {
	IfMatch string // delete only if the current ETag is this one
}

// ListOptions select one page of a listing.
type ListOptions struct {
	Prefix    string
	Delimiter string // "" (every key below Prefix) or "/"
	Token     string // Page.Next of the previous page
	MaxKeys   int    // 0: the backend's default page size
}

// Page is one page of a listing.
type Page struct {
	Objects  []ObjectInfo
	Prefixes []string // common prefixes, each ending in the delimiter
	Next     string   // token for the next page; empty when complete
}

// Copier is implemented by backends that copy server-side. Use the package function Copy, which
// falls back to a streamed Get and Put.
type Copier interface {
	// Copy copies src to dst within the store. opts.IfNoneMatch/IfMatch apply to dst where the
	// server honours them (MinIO ignores them on copy: Probe does not claim otherwise).
	Copy(ctx context.Context, src, dst string, opts *PutOptions) (ObjectInfo, error)
}

// BatchDeleter is implemented by stores that remove many keys per request (S3 DeleteObjects,
// up to 1,000 keys a request). Use the package function DeleteMany, which falls back to one
// Delete per key.
type BatchDeleter interface {
	// DeleteMany removes every key in keys, unconditionally; a missing key is not an error. It
	// stops at the first failure, which names the key it failed on.
	DeleteMany(ctx context.Context, keys []string) error
}

// BucketMaker is implemented by backends that can create the bucket or container they point
// at. Creating one that exists and is owned by the caller succeeds.
type BucketMaker interface {
	MakeBucket(ctx context.Context) error
}

// Describer is implemented by backends that can say what they are: "s3", "file", "mem", and
// their location without credentials. Probe and error messages use it.
type Describer interface {
	Describe() Description
}

// Description names a store without any secret.
type Description struct {
	Scheme   string `json:"scheme"`
	Location string `json:"location"` // the URL without credentials or query
	Endpoint string `json:"endpoint,omitempty"`
	// MountType is the file system type of a file store's root ("ext4", "nfs"…).
	MountType string `json:"mount_type,omitempty"`
}

// Metadata keys that wharf itself writes.
const (
	MetaPutID  = "wharf-put-id" // random per conditional put, to resolve ErrOutcomeUnknown
	MetaSHA256 = "wharf-sha256" // hex sha256 of the body, where the writer knows it
)
