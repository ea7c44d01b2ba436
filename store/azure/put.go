package azure

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"

	"github.com/wharfdata/wharf/store/driver"
	"github.com/wharfdata/wharf/store/upload"
)

// Upload sizes.
const (
	DefaultPartSize    = 16 << 20   // block size when neither config nor options say
	MinPartSize        = 1 << 20    // the smallest block wharf stages
	maxPartSize        = 4000 << 20 // Azure's largest block
	DefaultConcurrency = 4          // blocks in flight per upload
	maxBlocks          = 50000      // Azure's most committed blocks per blob
)

// Put writes body at key through the upload engine (package upload): a body of known size that
// fits in one block goes in one Put Blob, streamed; a larger or unknown-size body is staged in
// blocks (Put Block), at most Concurrency blocks of PartSize in memory (none for a body read
// in place), each retried alone, then committed by one Put Block List carrying the put's
// condition. An unknown size that fits in one block is buffered and sent in one Put Blob.
//
// A storage class is the blob's access tier (Hot, Cool, Cold, Archive), set by the request
// that makes the blob; Azure encrypts every blob with keys it manages, so an encryption asked
// for is refused (ErrUnsupported).
func (c *Container) Put(ctx context.Context, key string, body io.Reader, opts *driver.PutOptions) (driver.ObjectInfo, error) {
	if !opts.Encryption.IsZero() {
		return driver.ObjectInfo{}, &driver.Error{Op: "put", Key: key, Kind: driver.ErrUnsupported,
			Err: errors.New("every Azure blob is encrypted with keys Azure manages; wharf asks for no other encryption there")}
	}
	if _, err := accessTier(key, opts.StorageClass); err != nil {
		return driver.ObjectInfo{}, err
	}
	return upload.Put(ctx, key, body, opts, c.engine(key, opts))
}

// StorageClasses reports that Azure puts choose an access tier.
func (c *Container) StorageClasses() bool { return true }

// accessTier returns the access tier a storage class names (case aside), nil for none.
func accessTier(key, class string) (*blob.AccessTier, error) {
	if class == "" {
		return nil, nil
	}
	for _, t := range []blob.AccessTier{blob.AccessTierHot, blob.AccessTierCool, blob.AccessTierCold, blob.AccessTierArchive} {
		if strings.EqualFold(class, string(t)) {
			return &t, nil
		}
	}
	return nil, &driver.Error{Op: "put", Key: key, Kind: driver.ErrConfig,
		Err: fmt.Errorf("storage class %q: Azure's access tiers are Hot, Cool, Cold and Archive", class)}
}

// engine is how the upload engine writes key in this container.
func (c *Container) engine(key string, opts *driver.PutOptions) upload.Backend {
	partSize := min(max(cmp.Or(opts.PartSize, c.partSize, DefaultPartSize), MinPartSize), maxPartSize)
	return upload.Backend{
		Policy: c.policy,
		Limits: upload.Limits{
			PartSize:    partSize,
			Concurrency: cmp.Or(opts.Concurrency, c.concurrency, DefaultConcurrency),
			MinPart:     MinPartSize, MaxPart: maxPartSize, MaxParts: maxBlocks, SingleMax: partSize,
		},
		Single: func(ctx context.Context, body io.Reader, size int64, opts *driver.PutOptions) (driver.ObjectInfo, error) {
			return c.putSingle(ctx, key, &sizedBody{r: body, size: size}, size, opts)
		},
		Start: func(_ context.Context, opts *driver.PutOptions) (upload.Parts, error) {
			return &blocks{c: c, blob: c.blockBlob(key), key: key, opts: opts, idPrefix: driver.NewPutID()[:16]}, nil
		},
		Head: func(ctx context.Context) (driver.ObjectInfo, error) { return c.Head(ctx, key) },
		Log:  c.log,
	}
}

// putSingle sends body in one Put Blob carrying the condition, and its CRC-32C
// (opts.CRC32C) in the metadata.
func (c *Container) putSingle(ctx context.Context, key string, body *sizedBody, size int64, opts *driver.PutOptions) (driver.ObjectInfo, error) {
	md := driver.WithCRC32C(opts.Metadata, opts.CRC32C)
	tier, _ := accessTier(key, opts.StorageClass)
	resp, err := c.blockBlob(key).Upload(ctx, body, &blockblob.UploadOptions{
		Tier:             tier,
		HTTPHeaders:      httpHeaders(opts),
		Metadata:         encodeMetadata(md),
		AccessConditions: putConditions(opts),
	})
	if err != nil {
		return driver.ObjectInfo{}, c.mapError(ctx, call{op: "put", key: key, ifMatch: opts.IfMatch != "", conditional: opts.Conditional()}, err)
	}
	info := putInfo(key, size, etagString(resp.ETag), deref(resp.LastModified), opts)
	info.Metadata = md
	return info, nil
}

// httpHeaders returns the blob properties of a put: its content type and standard headers,
// or nil when it has none.
func httpHeaders(opts *driver.PutOptions) *blob.HTTPHeaders {
	if opts.ContentType == "" && opts.Headers.IsZero() {
		return nil
	}
	h := opts.Headers
	return &blob.HTTPHeaders{
		BlobContentType:        optString(opts.ContentType),
		BlobCacheControl:       optString(h.CacheControl),
		BlobContentDisposition: optString(h.ContentDisposition),
		BlobContentEncoding:    optString(h.ContentEncoding),
		BlobContentLanguage:    optString(h.ContentLanguage),
	}
}

func putInfo(key string, size int64, etag string, mod time.Time, opts *driver.PutOptions) driver.ObjectInfo {
	return driver.ObjectInfo{Key: key, Size: size, ETag: etag, LastModified: mod, ContentType: opts.ContentType,
		Headers: opts.Headers, Metadata: opts.Metadata}
}

// sizedBody presents the next size bytes of r as the io.ReadSeekCloser the SDK wants: it
// measures the body by seeking to its end, and rewinds to its start before sending. Seeking
// moves nothing until a byte is read; after that only an io.Seeker underneath can rewind. A
// body that ends early fails as the caller's body (bodyError), never as the driver.
type sizedBody struct {
	r    io.Reader
	size int64
	pos  int64 // bytes read
	off  int64 // the offset Seek last set
	base int64 // r's offset when the first byte was read (when r is an io.Seeker)
}

func (b *sizedBody) Read(p []byte) (int, error) {
	if b.off != b.pos {
		if err := b.rewind(); err != nil {
			return 0, err
		}
	}
	if b.pos >= b.size {
		return 0, io.EOF
	}
	if int64(len(p)) > b.size-b.pos {
		p = p[:b.size-b.pos]
	}
	if b.pos == 0 {
		if s, ok := b.r.(io.Seeker); ok {
			b.base, _ = s.Seek(0, io.SeekCurrent)
		}
	}
	n, err := b.r.Read(p)
	b.pos += int64(n)
	b.off = b.pos
	switch {
	case err == io.EOF && b.pos < b.size:
		return n, &bodyError{fmt.Errorf("it ended after %d of the %d bytes the put said: %w", b.pos, b.size, io.ErrUnexpectedEOF)}
	case err != nil && err != io.EOF:
		return n, &bodyError{err}
	}
	return n, nil
}

// rewind moves r to b.off, which Seek set after bytes were read.
func (b *sizedBody) rewind() error {
	s, ok := b.r.(io.Seeker)
	if !ok || b.off != 0 {
		return &bodyError{errors.New("the body cannot be sent again: it is not seekable")}
	}
	if _, err := s.Seek(b.base, io.SeekStart); err != nil {
		return &bodyError{err}
	}
	b.pos = 0
	return nil
}

func (b *sizedBody) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += b.off
	case io.SeekEnd:
		offset += b.size
	}
	if offset < 0 || offset > b.size || (offset != 0 && offset != b.size && offset != b.pos) {
		return 0, fmt.Errorf("azure: cannot seek the body to %d", offset)
	}
	b.off = offset
	return offset, nil
}

func (b *sizedBody) Close() error { return nil }

// blocks is one staged-block upload: the engine's Parts. Nothing is created before the
// commit: staged blocks stay uncommitted, invisible at the key, and Azure discards them (at
// the next commit to the key, or after a week), so Abort has nothing to remove.
type blocks struct {
	c        *Container
	blob     *blockblob.Client
	key      string
	opts     *driver.PutOptions
	idPrefix string // random per upload: its block ids never collide with another's
	staged   atomic.Int64
}

var _ upload.Parts = (*blocks)(nil)

// blockID returns the id of block n (from 1): base64 of a fixed-length string, as Azure wants
// every id of a blob to have the same length.
func (u *blocks) blockID(n int) string {
	return base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "wharf-%s-%06d", u.idPrefix, n))
}

// Send stages block n in one Put Block.
func (u *blocks) Send(ctx context.Context, n int, body io.ReadSeeker, _ int64, _ string) error {
	_, err := u.blob.StageBlock(ctx, u.blockID(n), streaming.NopCloser(body), nil)
	if err == nil {
		u.staged.Add(1)
	}
	return u.c.mapError(ctx, call{op: "put", key: u.key}, err)
}

// Commit commits blocks 1 to n with the put's content type, headers, metadata and condition
// (If-None-Match * or If-Match): a create-if-absent stays one at its last step.
// The metadata carries the blob's CRC-32C crc (wharf-crc32c), known by then: Azure keeps no
// checksum of a blob made of blocks.
func (u *blocks) Commit(ctx context.Context, n int, size int64, crc string) (driver.ObjectInfo, error) {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = u.blockID(i + 1)
	}
	md := driver.WithCRC32C(u.opts.Metadata, crc)
	tier, _ := accessTier(u.key, u.opts.StorageClass)
	resp, err := u.blob.CommitBlockList(ctx, ids, &blockblob.CommitBlockListOptions{
		Tier:             tier,
		HTTPHeaders:      httpHeaders(u.opts),
		Metadata:         encodeMetadata(md),
		AccessConditions: putConditions(u.opts),
	})
	if err != nil {
		return driver.ObjectInfo{}, u.c.mapError(ctx, call{op: "put", key: u.key, ifMatch: u.opts.IfMatch != "", conditional: u.opts.Conditional()}, err)
	}
	info := putInfo(u.key, size, etagString(resp.ETag), deref(resp.LastModified), u.opts)
	info.Metadata = md
	return info, nil
}

// Abort leaves the staged blocks to Azure, which discards uncommitted blocks.
func (u *blocks) Abort(context.Context) {
	if n := u.staged.Load(); n > 0 {
		u.c.log.Debug("a failed block upload left its staged blocks uncommitted; Azure discards them",
			"container", u.c.container, "key", u.key, "blocks", n)
	}
}
