package driver

import (
	"context"
	"io"
	"maps"
	"time"
)

// Bucket is what a backend implements: the smallest contract every store can keep. Callers never
// hold a Bucket; they hold the portable *store.Store, which validates keys, applies a prefix and
// the retry policy, and falls back where an optional capability is missing, all before a Bucket
// sees a call. So a Bucket may assume that every key it is given is valid (store.ValidateKey),
// that options are never nil, that at most one of IfNoneMatch and IfMatch is set, and that
// each call is one attempt: it makes no retries of its own, except per part inside a
// multipart upload (see package upload).
//
// Every method takes a context first; a cancelled context returns the context's error
// unwrapped, never one of the kinds. Every other failure is an *Error that unwraps to exactly
// one kind: ErrNotExist, ErrPreconditionFailed, ErrBucketMissing, ErrForbidden,
// ErrUnsupported, ErrUnavailable, ErrOutcomeUnknown or ErrKeyInvalid, with Fault set when the
// failure is transient (the retry policy decides from it).
type Bucket interface {
	// Get opens the object at key. With opts.IfMatch set the read is pinned: a different
	// current ETag is ErrPreconditionFailed (a server that ignores the pin is caught by the
	// caller comparing Object.Info.ETag). With opts.Length > 0 (or opts.Offset > 0) only that
	// byte range is returned; Info.Size is still the whole object's. A missing key is
	// ErrNotExist; a missing bucket ErrBucketMissing, never ErrNotExist.
	Get(ctx context.Context, key string, opts *GetOptions) (*Object, error)

	// Head returns the object's metadata without its body: ErrNotExist when absent,
	// ErrBucketMissing when the bucket itself is absent.
	Head(ctx context.Context, key string) (ObjectInfo, error)

	// Put writes body at key and returns what the store recorded (at least Key, Size and
	// ETag). opts.IfNoneMatch makes it create-if-absent, opts.IfMatch replace-if-match; a
	// failed condition is ErrPreconditionFailed whatever status the server used (412, 409, or
	// 404 on an If-Match put). A conditional put whose answer was lost is ErrOutcomeUnknown.
	// The object appears whole or not at all: a failed or cancelled put leaves nothing at key
	// and no upload open. A body that is also an io.ReaderAt, with opts.Size given, may be read
	// in place (ReadAt of each part, in parallel, and again for a part resent).
	Put(ctx context.Context, key string, body io.Reader, opts *PutOptions) (ObjectInfo, error)

	// Delete removes key; a missing key succeeds. With opts.IfMatch the delete is
	// conditional where the server enforces it (the probe tells whether it does).
	Delete(ctx context.Context, key string, opts *DeleteOptions) error

	// List returns one page of the keys under opts.Prefix in sorted order (byte order).
	// Page.Next, passed back as opts.Token, gives the next page; an empty Next means the
	// listing is complete. With opts.Delimiter "/", keys below the next '/' are rolled up into
	// Page.Prefixes.
	List(ctx context.Context, opts *ListOptions) (Page, error)

	// Describe names the store without any secret.
	Describe() Description

	// Close releases what the bucket holds (connections, files).
	Close() error
}

// The optional capabilities. A backend implements the ones its store has; the portable store
// learns them once, when it is opened, and falls back where one is missing. A decorator (a
// fault injector, a test pause) implements only what it intercepts and returns what it wraps
// from Unwrap: a capability it does not implement reaches the wrapped bucket directly.

// Copier copies server-side.
type Copier interface {
	// Copy copies src to dst within the bucket. What opts sets of the content type, the
	// standard headers and the user metadata replaces the source's; what it leaves unset is
	// the source's (Carry says how, field by field). opts.IfNoneMatch/IfMatch apply to dst
	// where the server honours them (MinIO ignores them on copy; the probe does not claim
	// otherwise). A missing src is ErrNotExist.
	Copy(ctx context.Context, src, dst string, opts *PutOptions) (ObjectInfo, error)
}

// BatchDeleter removes many keys per request (S3 DeleteObjects, Azure blob batch).
type BatchDeleter interface {
	// DeleteMany removes every key, unconditionally; a missing key is not an error. It stops
	// at the first failure, which names the key it failed on. It applies the retry policy to
	// each request it makes itself.
	DeleteMany(ctx context.Context, keys []string) error
}

// BucketMaker creates the bucket, container or directory the store points at. Creating one
// that exists and is owned by the caller succeeds.
type BucketMaker interface {
	MakeBucket(ctx context.Context) error
}

// Presigner is implemented by a backend that can sign a URL granting anyone who holds it a
// read of one object until a time, with no credentials of their own: an S3 presigned URL,
// an Azure SAS. PresignGet makes no request; a store with nothing to sign with (anonymous,
// or credentials that cannot sign) is ErrUnsupported, saying why.
type Presigner interface {
	PresignGet(ctx context.Context, key string, expiry time.Duration) (string, error)
}

// BucketRemover is implemented by a backend that can remove its bucket, container or
// directory. RemoveBucket removes it only when it is empty: one that holds an object is
// ErrBucketNotEmpty and is left as it is, a missing one ErrBucketMissing.
type BucketRemover interface {
	RemoveBucket(ctx context.Context) error
}

// BucketLister lists the buckets (containers) its credentials can see where it was opened
// without one: at an S3 endpoint, in a GCS project, in an Azure account. It is the only
// method a bucket opened that way may be asked.
type BucketLister interface {
	ListBuckets(ctx context.Context) ([]BucketInfo, error)
}

// BucketInfo is one bucket of a listing.
type BucketInfo struct {
	Name    string    `json:"name"`
	Created time.Time `json:"created,omitzero"`
}

// UploadLister finds and aborts incomplete uploads: S3 multipart uploads started and never
// completed or aborted (their parts are stored, and billed, until then), Azure blobs that
// have uncommitted blocks only.
type UploadLister interface {
	// ListUploads returns every incomplete upload whose key starts with prefix, in key order
	// (then oldest first), following every page. It applies the retry policy to each
	// request it makes itself. Some servers list less than the prefix asks: see each
	// backend's documentation.
	ListUploads(ctx context.Context, prefix string) ([]Upload, error)
	// AbortUpload ends u and discards its parts. An upload that is already gone (completed
	// or aborted) is success. It applies the retry policy itself.
	AbortUpload(ctx context.Context, u Upload) error
}

// HashVerifier is implemented by a backend whose ETags do not prove an object's bytes and
// whose reads are cheap: the file store, where an ETag is bound to the file's inode,
// modification time and size, so a file edited in place with its modification time put back
// keeps its ETag, and where reading a file whole costs about what hashing it does. A caller
// that vouches for an object's bytes (a resume keeping a part, validate certifying one)
// hashes the object on such a store instead of trusting its ETag.
type HashVerifier interface {
	// VerifyByHash reports whether objects here are to be verified by hashing their bytes.
	VerifyByHash() bool
}

// MD5Tagger is implemented by a backend whose ETag of an object put whole (in one request,
// not in parts) is the hexadecimal MD5 of its bytes: S3 and the S3-compatible stores. Two
// such ETags that are equal hold the same bytes; an object put in parts has an ETag with a
// '-' in it, and one encrypted with a KMS key an ETag that is no MD5, which a caller
// comparing contents must read as "not known", not as "different bytes".
type MD5Tagger interface {
	// ETagsAreMD5 reports whether an object put whole has its bytes' MD5 as its ETag.
	ETagsAreMD5() bool
}

// ChecksumChecker is implemented by a backend whose puts send their CRC-32C for the server to
// check (S3): the probe asks it whether the server really refuses a body that does not match.
type ChecksumChecker interface {
	// CheckChecksums puts a small body at key with a CRC-32C it does not have, and deletes
	// whatever that left. checked reports that the server refused the body; evidence says
	// what it answered. err is a failure that shows neither (the store did not answer).
	CheckChecksums(ctx context.Context, key string) (checked bool, evidence string, err error)
}

// Classer is implemented by a backend that stores objects in classes a put can choose
// (PutOptions.StorageClass) and can be asked for server-side encryption (PutOptions.Encryption,
// which it refuses by itself where it cannot do what is asked): S3, GCS, Azure. The portable
// store refuses both for any other backend.
type Classer interface {
	StorageClasses() bool
}

// LocalFiler is implemented by a backend that keeps each object as a file of this machine's
// file system (the file store): a caller that must say which disk filled up, or that a
// directory is not made yet, asks where a key lives instead of asking which backend it holds.
type LocalFiler interface {
	// LocalPath returns the path of key's file (of the root for "").
	LocalPath(key string) string
}

// Upload is an incomplete upload.
type Upload struct {
	Key       string    `json:"key"`
	ID        string    `json:"id,omitempty"`       // the store's id of the upload (S3's upload id)
	Initiated time.Time `json:"initiated,omitzero"` // when it was started, by the store's clock
}

// Wrapper is implemented by decorators: Unwrap returns the bucket they wrap.
type Wrapper interface {
	Unwrap() Bucket
}

// Find returns the outermost bucket in b's chain of decorators that is a T (a Copier, a
// BucketMaker…), so that a decorator which implements a capability intercepts it and one which
// does not leaves it to what it wraps.
func Find[T any](b Bucket) (T, bool) {
	for b != nil {
		if t, ok := b.(T); ok {
			return t, true
		}
		w, ok := b.(Wrapper)
		if !ok {
			break
		}
		b = w.Unwrap()
	}
	var zero T
	return zero, false
}

// ObjectInfo describes an object.
type ObjectInfo struct {
	Key          string            `json:"key"`
	Size         int64             `json:"size"`
	ETag         string            `json:"etag,omitempty"` // unquoted; the generation on GCS
	LastModified time.Time         `json:"last_modified,omitzero"`
	ContentType  string            `json:"content_type,omitempty"`
	Headers      Headers           `json:"headers,omitzero"`
	Metadata     map[string]string `json:"metadata,omitempty"` // keys lowercase: "wharf-sha256"
	// CRC32C is the CRC-32C of the whole object's bytes (crc32c.Format): the store's own
	// where it keeps and checks one (S3's full-object checksum, Google Cloud Storage's
	// crc32c), else the one wharf's put recorded in MetaCRC32C, which the portable store
	// moves here out of Metadata. "" when neither is known with this answer (S3 returns its
	// own with a Head, not with a ranged read).
	CRC32C string `json:"crc32c,omitempty"`
	// StorageClass is the class the store keeps the object in, where it says ("" for S3's
	// STANDARD, which S3 leaves out; GCS's class; Azure's access tier).
	StorageClass string `json:"storage_class,omitempty"`
}

// WithCRC32C returns md with MetaCRC32C set to crc ("" leaves md as it is), leaving md itself
// as it was: what a backend that records the checksum in metadata sends.
func WithCRC32C(md map[string]string, crc string) map[string]string {
	if crc == "" {
		return md
	}
	out := maps.Clone(md)
	if out == nil {
		out = map[string]string{}
	}
	out[MetaCRC32C] = crc
	return out
}

// LiftCRC32C moves a CRC-32C recorded in the metadata (MetaCRC32C) to i.CRC32C, unless the
// store gave its own, and drops it from i.Metadata: what wharf records for itself is not the
// user's metadata.
func (i *ObjectInfo) LiftCRC32C() {
	v, ok := i.Metadata[MetaCRC32C]
	if !ok {
		return
	}
	if i.CRC32C == "" {
		i.CRC32C = v
	}
	md := maps.Clone(i.Metadata)
	delete(md, MetaCRC32C)
	if len(md) == 0 {
		md = nil
	}
	i.Metadata = md
}

// Headers are the standard HTTP headers an object carries besides its content type: a copy
// keeps them, as the clouds' own tools do.
type Headers struct {
	CacheControl       string `json:"cache_control,omitempty"`
	ContentDisposition string `json:"content_disposition,omitempty"`
	ContentEncoding    string `json:"content_encoding,omitempty"`
	ContentLanguage    string `json:"content_language,omitempty"`
}

// IsZero reports whether no header is set.
func (h Headers) IsZero() bool { return h == Headers{} }

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
	Headers     Headers
	Metadata    map[string]string
	// PartSize and Concurrency bound a multipart upload: at most Concurrency parts of PartSize
	// bytes are in memory at once. Zero means the store's setting or the backend's default.
	PartSize    int64
	Concurrency int
	// StorageClass, when set, is the class the object is stored in: S3's STANDARD_IA,
	// GLACIER_IR…, GCS's NEARLINE, COLDLINE…, Azure's access tier Hot, Cool, Cold, Archive.
	// A backend without storage classes refuses it (ErrUnsupported).
	StorageClass string
	// Encryption, when set, asks for server-side encryption as S3 names it; a backend that
	// cannot do what it asks refuses it (ErrUnsupported).
	Encryption Encryption
	// CRC32C, when set, is the CRC-32C the body must have (crc32c.Format): a copy gives its
	// source's. The put computes the body's own as it sends it either way; one that differs
	// fails with ErrChecksumMismatch and leaves no object. A backend's Single and Commit
	// receive the body's own here.
	CRC32C string
}

// Encryption is a put's server-side encryption: Mode "AES256" (keys the store manages) or
// "aws:kms" (a KMS key: KMSKeyID, or the store's default KMS key when empty). On GCS a
// KMSKeyID is the customer-managed key's resource name, which needs no Mode.
type Encryption struct {
	Mode     string `json:"mode,omitempty"`
	KMSKeyID string `json:"kms_key_id,omitempty"`
}

// IsZero reports whether no encryption is asked for.
func (e Encryption) IsZero() bool { return e == Encryption{} }

// Conditional reports whether the put carries a condition.
func (o *PutOptions) Conditional() bool { return o != nil && (o.IfNoneMatch || o.IfMatch != "") }

// Replaces reports whether a copy with these options sets any of what it otherwise keeps from
// its source: the content type, the standard headers or the user metadata.
func (o *PutOptions) Replaces() bool {
	return o.ContentType != "" || !o.Headers.IsZero() || o.Metadata != nil
}

// Carry fills what o leaves unset from src, as a copy keeps it, field by field: the content
// type when o has none; the standard headers when o sets none (any header set in o replaces
// all four of src's); the user metadata when o.Metadata is nil (a non-nil map, even empty,
// replaces src's), without src's wharf-put-id, which names the write that made src.
func Carry(o *PutOptions, src ObjectInfo) {
	if o.ContentType == "" {
		o.ContentType = src.ContentType
	}
	if o.Headers.IsZero() {
		o.Headers = src.Headers
	}
	if o.Metadata == nil && len(src.Metadata) > 0 {
		md := maps.Clone(src.Metadata)
		delete(md, MetaPutID)
		if len(md) > 0 {
			o.Metadata = md
		}
	}
}

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

// Description names a store without any secret.
type Description struct {
	Scheme   string `json:"scheme"`
	Location string `json:"location"` // the URL of the store's root, without credentials
	Endpoint string `json:"endpoint,omitempty"`
	// MountType is the file system type of a file store's root ("ext4", "nfs"…).
	MountType string `json:"mount_type,omitempty"`
}

// BucketNoun is what the store's backend calls its bucket: "bucket", "container" (Azure),
// "directory" (a file store), for messages.
func (d Description) BucketNoun() string {
	if b, ok := Lookup(d.Scheme); ok && b.Noun != "" {
		return b.Noun
	}
	return "bucket"
}

// Local reports whether the store's backend keeps its objects as files of this machine's
// file system (Backend.Local: the file store).
func (d Description) Local() bool {
	b, ok := Lookup(d.Scheme)
	return ok && b.Local
}

// Metadata keys that wharf itself writes.
const (
	MetaPutID = "wharf-put-id" // random per conditional put, to resolve ErrOutcomeUnknown
	// MetaCRC32C is the CRC-32C of the object's bytes (crc32c.Format), recorded by the put
	// that wrote them where the store keeps no checksum of its own that reads return.
	MetaCRC32C = "wharf-crc32c"
	MetaSHA256 = "wharf-sha256" // hex sha256 of the body, where the writer knows it
)

// ContextReader returns a reader of r that fails with ctx's error once ctx is done, so that a
// copy from a reader that never blocks (memory, a pipe already full) still stops.
func ContextReader(ctx context.Context, r io.Reader) io.Reader { return &ctxReader{ctx, r} }

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
