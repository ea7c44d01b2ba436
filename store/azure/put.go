package azure

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"

	"github.com/wharfdata/wharf/store/driver"
)

// Upload sizes.
const (
	DefaultPartSize    = 16 << 20   // block size when neither config nor options say
	MinPartSize        = 1 << 20    // the smallest block wharf stages
	maxPartSize        = 4000 << 20 // Azure's largest block
	DefaultConcurrency = 4          // blocks in flight per upload
	maxBlocks          = 50000      // Azure's most committed blocks per blob
)

// Put writes body at key. A body of known size that fits in one block goes in one Put Blob,
// streamed; a larger or unknown-size body is staged in blocks (Put Block), at most Concurrency
// blocks of PartSize in memory, each retried alone by the policy, then committed by one Put
// Block List carrying the put's condition. An unknown size that fits in one block is buffered
// and sent in one Put Blob.
func (c *Container) Put(ctx context.Context, key string, body io.Reader, opts *driver.PutOptions) (driver.ObjectInfo, error) {
	if opts == nil {
		opts = &driver.PutOptions{}
	}
	if body == nil {
		body = bytes.NewReader(nil)
	}
	partSize, conc := c.partSettings(opts)
	if opts.Size > 0 && opts.Size <= partSize {
		return c.putSingle(ctx, key, &sizedBody{r: body, size: opts.Size}, opts.Size, opts)
	}
	if opts.Size > 0 {
		partSize = max(partSize, (opts.Size+maxBlocks-1)/maxBlocks)
		return c.putBlocks(ctx, key, body, nil, opts, partSize, conc)
	}
	first := getBuf(partSize)
	n, err := io.ReadFull(body, first)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		defer putBuf(first)
		return c.putSingle(ctx, key, &sizedBody{r: bytes.NewReader(first[:n]), size: int64(n)}, int64(n), opts)
	case err != nil:
		putBuf(first)
		return driver.ObjectInfo{}, driver.BodyError(ctx, "put", key, err)
	}
	return c.putBlocks(ctx, key, body, first, opts, partSize, conc)
}

// partSettings returns the block size and concurrency for one upload: options first, then the
// config, then the defaults.
func (c *Container) partSettings(opts *driver.PutOptions) (int64, int) {
	size := cmpOr(opts.PartSize, c.partSize, DefaultPartSize)
	size = min(max(size, MinPartSize), maxPartSize)
	conc := cmpOr(opts.Concurrency, c.concurrency, DefaultConcurrency)
	return size, max(conc, 1)
}

func cmpOr[T int | int64](vs ...T) T {
	for _, v := range vs {
		if v > 0 {
			return v
		}
	}
	return 0
}

// putSingle sends body in one Put Blob carrying the condition.
func (c *Container) putSingle(ctx context.Context, key string, body *sizedBody, size int64, opts *driver.PutOptions) (driver.ObjectInfo, error) {
	resp, err := c.blockBlob(key).Upload(ctx, body, &blockblob.UploadOptions{
		HTTPHeaders:      httpHeaders(opts),
		Metadata:         encodeMetadata(opts.Metadata),
		AccessConditions: putConditions(opts),
	})
	if err != nil {
		return driver.ObjectInfo{}, c.mapError(ctx, call{op: "put", key: key, ifMatch: opts.IfMatch != "", conditional: opts.Conditional()}, err)
	}
	return putInfo(key, size, etagString(resp.ETag), deref(resp.LastModified), opts), nil
}

func httpHeaders(opts *driver.PutOptions) *blob.HTTPHeaders {
	if opts.ContentType == "" {
		return nil
	}
	return &blob.HTTPHeaders{BlobContentType: to.Ptr(opts.ContentType)}
}

func putInfo(key string, size int64, etag string, mod time.Time, opts *driver.PutOptions) driver.ObjectInfo {
	return driver.ObjectInfo{Key: key, Size: size, ETag: etag, LastModified: mod, ContentType: opts.ContentType, Metadata: opts.Metadata}
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

// upload is one staged-block upload in flight.
type upload struct {
	c        *Container
	blob     *blockblob.Client
	key      string
	opts     *driver.PutOptions
	partSize int64
	idPrefix string        // random per upload: its block ids never collide with another's
	tokens   chan struct{} // one per block buffer in use: memory is bounded by Concurrency × PartSize

	mu  sync.Mutex
	ids []string // block ids by block number - 1
	err error
}

// putBlocks stages body (after first, a block already read, when not nil) in blocks and
// commits them with the put's condition. On any failure nothing is committed: the staged
// blocks stay uncommitted, invisible at the key, and Azure discards them (at the next commit
// to the key, or after a week). Errors leave with Fault None.
func (c *Container) putBlocks(ctx context.Context, key string, body io.Reader, first []byte,
	opts *driver.PutOptions, partSize int64, conc int) (driver.ObjectInfo, error) {
	u := &upload{c: c, blob: c.blockBlob(key), key: key, opts: opts, partSize: partSize,
		idPrefix: driver.NewPutID()[:16], tokens: make(chan struct{}, conc)}
	size, err := u.stage(ctx, body, first)
	if err == nil && opts.Size > 0 && size != opts.Size {
		err = &driver.Error{Op: "put", Key: key, Kind: driver.ErrUnavailable,
			Err: fmt.Errorf("reading the body: it had %d bytes, the put said %d: %w", size, opts.Size, io.ErrUnexpectedEOF)}
	}
	var info driver.ObjectInfo
	if err == nil {
		info, err = u.commit(ctx, size)
	}
	if err != nil {
		if len(u.ids) > 0 {
			c.log.Debug("a failed block upload left its staged blocks uncommitted; Azure discards them",
				"container", c.container, "key", key, "blocks", len(u.ids))
		}
		if ctx.Err() != nil {
			return driver.ObjectInfo{}, ctx.Err()
		}
		return driver.ObjectInfo{}, driver.WithoutFault(err)
	}
	return info, nil
}

// blockID returns the id of block n (from 1): base64 of a fixed-length string, as Azure wants
// every id of a blob to have the same length.
func (u *upload) blockID(n int) string {
	return base64Std(fmt.Sprintf("wharf-%s-%06d", u.idPrefix, n))
}

// stage reads body into block buffers and stages up to cap(tokens) blocks at once. It returns
// the number of bytes staged, or the first error (the others are cancelled).
func (u *upload) stage(ctx context.Context, body io.Reader, first []byte) (int64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var total int64
	for n := 1; ; n++ {
		buf, last, err := u.nextBlock(ctx, body, first, n)
		first = nil
		if err != nil {
			u.fail(err)
			break
		}
		if buf == nil {
			break
		}
		total += int64(len(buf))
		id := u.blockID(n)
		u.mu.Lock()
		u.ids = append(u.ids, id)
		u.mu.Unlock()
		wg.Go(func() {
			defer u.release(buf)
			if err := u.stageBlock(ctx, id, buf); err != nil {
				u.fail(err)
				cancel()
			}
		})
		if last {
			break
		}
	}
	wg.Wait()
	u.mu.Lock()
	defer u.mu.Unlock()
	return total, u.err
}

// nextBlock waits for a free buffer and fills it from body. It returns nil when body is done,
// and last when this block ends it.
func (u *upload) nextBlock(ctx context.Context, body io.Reader, first []byte, n int) (buf []byte, last bool, err error) {
	if first != nil {
		u.tokens <- struct{}{}
		return first, false, nil
	}
	if n > maxBlocks {
		return nil, false, &driver.Error{Op: "put", Key: u.key, Kind: driver.ErrUnsupported,
			Err: fmt.Errorf("body exceeds %d blocks of %d bytes: give a larger part size", maxBlocks, u.partSize)}
	}
	select {
	case u.tokens <- struct{}{}:
	case <-ctx.Done():
		return nil, false, ctx.Err()
	}
	if u.failed() {
		<-u.tokens
		return nil, false, ctx.Err()
	}
	buf = getBuf(u.partSize)
	m, err := io.ReadFull(body, buf)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		if m == 0 && n > 1 {
			u.release(buf)
			return nil, true, nil
		}
		return buf[:m], true, nil
	case err != nil:
		u.release(buf)
		return nil, false, driver.BodyError(ctx, "put", u.key, err)
	}
	return buf, false, nil
}

func (u *upload) release(buf []byte) {
	putBuf(buf)
	<-u.tokens
}

func (u *upload) fail(err error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.err == nil {
		u.err = err
	}
}

func (u *upload) failed() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.err != nil
}

// stageBlock uploads one block, retried alone under the policy.
func (u *upload) stageBlock(ctx context.Context, id string, buf []byte) error {
	req := driver.Request{Op: "put", Key: u.key, Replayable: true}
	return u.c.policy.Do(ctx, req, func(ctx context.Context) error {
		_, err := u.blob.StageBlock(ctx, id, streaming.NopCloser(bytes.NewReader(buf)), nil)
		return u.c.mapError(ctx, call{op: "put", key: u.key}, err)
	})
}

// commit commits the staged blocks with the put's content type, metadata and condition
// (If-None-Match * or If-Match): a create-if-absent stays one at its last step. A conditional
// commit runs as a conditional request: a lost answer is ErrOutcomeUnknown, never a resend.
func (u *upload) commit(ctx context.Context, size int64) (driver.ObjectInfo, error) {
	o := &blockblob.CommitBlockListOptions{
		HTTPHeaders:      httpHeaders(u.opts),
		Metadata:         encodeMetadata(u.opts.Metadata),
		AccessConditions: putConditions(u.opts),
	}
	var (
		etag string
		mod  time.Time
	)
	cl := call{op: "put", key: u.key, ifMatch: u.opts.IfMatch != "", conditional: u.opts.Conditional()}
	req := driver.Request{Op: "put", Key: u.key, Conditional: u.opts.Conditional(), Replayable: true}
	err := u.c.policy.Do(ctx, req, func(ctx context.Context) error {
		resp, err := u.blob.CommitBlockList(ctx, u.ids, o)
		if err != nil {
			return u.c.mapError(ctx, cl, err)
		}
		etag, mod = etagString(resp.ETag), deref(resp.LastModified)
		return nil
	})
	if err != nil {
		return driver.ObjectInfo{}, err
	}
	return putInfo(u.key, size, etag, mod, u.opts), nil
}

// Block buffers are pooled by size and reused across uploads.
var pools sync.Map // int64 → *sync.Pool of *[]byte

func getBuf(size int64) []byte {
	p, _ := pools.LoadOrStore(size, &sync.Pool{})
	if v := p.(*sync.Pool).Get(); v != nil {
		return *(v.(*[]byte))
	}
	return make([]byte, size)
}

func putBuf(b []byte) {
	b = b[:cap(b)]
	if p, ok := pools.Load(int64(len(b))); ok {
		p.(*sync.Pool).Put(&b)
	}
}

func base64Std(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
