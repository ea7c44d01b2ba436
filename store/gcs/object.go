package gcs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"cloud.google.com/go/storage"

	"github.com/wharfdata/wharf/store/driver"
)

// Get opens key: one request (to the XML API on Cloud Storage, the JSON API on an emulator),
// whose answer carries the generation, the user metadata and the content type. A pin (opts.IfMatch) asks for that generation, with the
// precondition that it is the live one: a superseded generation is ErrPreconditionFailed,
// whether the server answers 412 or 404 (no such generation; fake-gcs-server answers that, and
// ignores the precondition). The returned Info.Size is the whole object's size, also for a
// range read. Stored bytes are returned as stored (no decompressive transcoding).
func (b *Bucket) Get(ctx context.Context, key string, opts *driver.GetOptions) (*driver.Object, error) {
	c := call{op: "get", key: key}
	o := b.bucket.Object(key)
	if b.target.xmlReads {
		// Stored bytes as stored, no decompressive transcoding. (The SDK refuses the
		// Accept-Encoding this sets on a JSON API read; guardTransport sets it there.)
		o = o.ReadCompressed(true)
	}
	var pin int64
	if opts.IfMatch != "" {
		gen, err := parseGeneration(c, opts.IfMatch)
		if err != nil {
			return nil, err
		}
		pin = gen
		o = o.Generation(gen).If(storage.Conditions{GenerationMatch: gen})
	}
	length := int64(-1)
	if opts.Length > 0 {
		length = opts.Length
	}
	gctx, guard := withReadGuard(ctx)
	r, err := o.NewRangeReader(gctx, opts.Offset, length)
	if err != nil {
		return b.getFailed(ctx, c, opts, pin, mapError(ctx, c, err))
	}
	info := driver.ObjectInfo{
		Key: key, Size: r.Attrs.Size, ETag: etag(r.Attrs.Generation), LastModified: seconds(r.Attrs.LastModified),
		ContentType: r.Attrs.ContentType, Headers: guard.headers(), Metadata: lowerKeys(r.Metadata()),
		CRC32C: crcString(r.Attrs.CRC32C),
	}
	return &driver.Object{Info: info, ReadCloser: &objectBody{r: r, guard: guard, ctx: ctx, key: key}}, nil
}

// getFailed settles a failed Get. A 404 is a missing bucket, a missing key, or (pinned) a
// superseded generation: the live object tells which. A range starting at the object's end
// (GCS answers 416) is an empty read, not an error: a resumed read that broke after its last
// byte lands there.
func (b *Bucket) getFailed(ctx context.Context, c call, opts *driver.GetOptions, pin int64, mapped error) (*driver.Object, error) {
	var e *driver.Error
	if !errors.As(mapped, &e) {
		return nil, mapped
	}
	pinnedMiss := pin != 0 && e.Kind == driver.ErrNotExist
	emptyTail := e.Status == http.StatusRequestedRangeNotSatisfiable && opts.Offset > 0
	if !pinnedMiss && !emptyTail {
		return nil, b.notFound(ctx, c, mapped)
	}
	info, err := b.head(ctx, c)
	switch {
	case err != nil:
		return nil, err
	case pin != 0 && info.ETag != etag(pin):
		return nil, &driver.Error{Op: c.op, Key: c.key, Kind: driver.ErrPreconditionFailed, Status: e.Status, Reason: e.Reason,
			Err: fmt.Errorf("generation %d is not the live one (%s): %w", pin, info.ETag, e.Err)}
	case emptyTail && info.Size <= opts.Offset:
		return &driver.Object{Info: info, ReadCloser: io.NopCloser(strings.NewReader(""))}, nil
	}
	return nil, mapped
}

// objectBody is a Get's body. When the stream breaks, it returns the fault of the one HTTP
// response (not the SDK's refused attempt to reopen it), so the portable store can resume the read.
type objectBody struct {
	r     *storage.Reader
	guard *readGuard
	ctx   context.Context
	key   string
}

func (o *objectBody) Read(p []byte) (int, error) {
	n, err := o.r.Read(p)
	if err == nil || err == io.EOF {
		return n, err
	}
	if o.ctx.Err() != nil {
		return n, o.ctx.Err()
	}
	if fault := o.guard.fault(); fault != nil {
		return n, &driver.Error{Op: "get", Key: o.key, Kind: driver.ErrUnavailable, Fault: driver.FaultTransport, Err: fault}
	}
	return n, mapError(o.ctx, call{op: "get", key: o.key}, err)
}

func (o *objectBody) Close() error { return o.r.Close() }

// Head returns key's metadata: ErrNotExist when the key is absent, ErrBucketMissing when the
// bucket is.
func (b *Bucket) Head(ctx context.Context, key string) (driver.ObjectInfo, error) {
	return b.head(ctx, call{op: "head", key: key})
}

func (b *Bucket) head(ctx context.Context, c call) (driver.ObjectInfo, error) {
	attrs, err := b.bucket.Object(c.key).Attrs(ctx)
	if err != nil {
		return driver.ObjectInfo{}, b.notFound(ctx, c, mapError(ctx, c, err))
	}
	return objectInfo(c.key, attrs), nil
}

// Delete removes key; a missing key is success, a missing bucket ErrBucketMissing.
// opts.IfMatch makes it conditional on the generation where the server enforces it
// (fake-gcs-server does not).
func (b *Bucket) Delete(ctx context.Context, key string, opts *driver.DeleteOptions) error {
	c := call{op: "delete", key: key}
	o := b.bucket.Object(key)
	if opts.IfMatch != "" {
		gen, err := parseGeneration(c, opts.IfMatch)
		if err != nil {
			return err
		}
		o = o.If(storage.Conditions{GenerationMatch: gen})
	}
	err := b.notFound(ctx, c, mapError(ctx, c, o.Delete(ctx)))
	if kindOf(err) == driver.ErrNotExist {
		return nil
	}
	return err
}
