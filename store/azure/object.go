package azure

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/wharfdata/wharf/store/driver"
)

// Get opens key, pinned to opts.IfMatch and limited to opts' byte range when given. The
// returned Info.Size is the whole object's size, also for a range read.
func (c *Container) Get(ctx context.Context, key string, opts *driver.GetOptions) (*driver.Object, error) {
	o := &blob.DownloadStreamOptions{AccessConditions: ifMatch(opts.IfMatch)}
	if opts.Offset > 0 || opts.Length > 0 {
		o.Range = blob.HTTPRange{Offset: opts.Offset, Count: opts.Length}
	}
	resp, err := c.blob(key).DownloadStream(ctx, o)
	if err != nil {
		return c.getFailed(ctx, key, opts, err)
	}
	info := objectInfo(key, resp.ContentLength, resp.ETag, resp.LastModified, resp.ContentType, resp.Metadata)
	info.Headers = standardHeaders(resp.CacheControl, resp.ContentDisposition, resp.ContentEncoding, resp.ContentLanguage)
	if total, ok := driver.RangeTotal(deref(resp.ContentRange)); ok {
		info.Size = total
	}
	return &driver.Object{Info: info, ReadCloser: resp.Body}, nil
}

// getFailed maps a failed Get. A range starting at or past the end of the object (Azure
// answers 416, also for any range of an empty blob) is an empty read, not an error: a resumed
// read that broke after its last byte lands there.
func (c *Container) getFailed(ctx context.Context, key string, opts *driver.GetOptions, err error) (*driver.Object, error) {
	mapped := c.mapError(ctx, call{op: "get", key: key}, err)
	var e *driver.Error
	if !errors.As(mapped, &e) || e.Status != 416 {
		return nil, mapped
	}
	info, herr := c.Head(ctx, key)
	if herr != nil {
		return nil, herr
	}
	if opts.IfMatch != "" && info.ETag != unquote(opts.IfMatch) {
		return nil, &driver.Error{Op: "get", Key: key, Kind: driver.ErrPreconditionFailed, Status: 412}
	}
	if info.Size > opts.Offset {
		return nil, mapped
	}
	return &driver.Object{Info: info, ReadCloser: io.NopCloser(strings.NewReader(""))}, nil
}

// Head returns key's metadata: ErrNotExist when the key is absent, ErrBucketMissing when the
// container is.
func (c *Container) Head(ctx context.Context, key string) (driver.ObjectInfo, error) {
	p, err := c.blob(key).GetProperties(ctx, nil)
	if err != nil {
		return driver.ObjectInfo{}, c.mapError(ctx, call{op: "head", key: key}, err)
	}
	info := objectInfo(key, p.ContentLength, p.ETag, p.LastModified, p.ContentType, p.Metadata)
	info.Headers = standardHeaders(p.CacheControl, p.ContentDisposition, p.ContentEncoding, p.ContentLanguage)
	if p.AccessTier != nil && (p.AccessTierInferred == nil || !*p.AccessTierInferred) {
		info.StorageClass = *p.AccessTier // a tier set on the blob, not the account's default
	}
	return info, nil
}

// Delete removes key and its snapshots; a missing key is success. opts.IfMatch makes it
// conditional.
func (c *Container) Delete(ctx context.Context, key string, opts *driver.DeleteOptions) error {
	o := &blob.DeleteOptions{DeleteSnapshots: to.Ptr(blob.DeleteSnapshotsOptionTypeInclude)}
	o.AccessConditions = ifMatch(opts.IfMatch)
	_, err := c.blob(key).Delete(ctx, o)
	err = c.mapError(ctx, call{op: "delete", key: key}, err)
	var e *driver.Error
	if errors.As(err, &e) && e.Reason == "BlobNotFound" {
		return nil
	}
	return err
}

// List returns one page of keys under opts.Prefix.
func (c *Container) List(ctx context.Context, opts *driver.ListOptions) (driver.Page, error) {
	var maxResults *int32
	if opts.MaxKeys > 0 {
		maxResults = to.Ptr(int32(min(opts.MaxKeys, 5000)))
	}
	var (
		items    []*container.BlobItem
		prefixes []*container.BlobPrefix
		next     *string
		err      error
	)
	if opts.Delimiter != "" {
		var resp container.ListBlobsHierarchyResponse
		resp, err = c.client.NewListBlobsHierarchyPager(opts.Delimiter, &container.ListBlobsHierarchyOptions{
			Prefix: optString(opts.Prefix), Marker: optString(opts.Token), MaxResults: maxResults,
		}).NextPage(ctx)
		if resp.Segment != nil {
			items, prefixes = resp.Segment.BlobItems, resp.Segment.BlobPrefixes
		}
		next = resp.NextMarker
	} else {
		var resp container.ListBlobsFlatResponse
		resp, err = c.client.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{
			Prefix: optString(opts.Prefix), Marker: optString(opts.Token), MaxResults: maxResults,
		}).NextPage(ctx)
		if resp.Segment != nil {
			items = resp.Segment.BlobItems
		}
		next = resp.NextMarker
	}
	if err != nil {
		return driver.Page{}, c.mapError(ctx, call{op: "list", key: opts.Prefix}, err)
	}
	return listPage(items, prefixes, next), nil
}

// listPage merges one answer's blobs and prefixes into a page, in sorted order.
func listPage(items []*container.BlobItem, prefixes []*container.BlobPrefix, next *string) driver.Page {
	page := driver.Page{Objects: make([]driver.ObjectInfo, 0, len(items)), Next: deref(next)}
	for _, it := range items {
		info := driver.ObjectInfo{Key: deref(it.Name)}
		if p := it.Properties; p != nil {
			info.Size = deref(p.ContentLength)
			info.ETag = etagString(p.ETag)
			info.LastModified = deref(p.LastModified)
			info.ContentType = deref(p.ContentType)
		}
		page.Objects = append(page.Objects, info)
	}
	for _, p := range prefixes {
		page.Prefixes = append(page.Prefixes, deref(p.Name))
	}
	return page
}

// maxBatch is the most sub-requests one blob batch takes.
const maxBatch = 256

// DeleteMany removes keys (container-relative: no prefix of the store's URL is added) with blob
// batch requests of up to 256 deletes, each request under the retry policy. Missing keys are
// success. The first key the service refuses fails the call, naming it.
func (c *Container) DeleteMany(ctx context.Context, keys []string) error {
	for start := 0; start < len(keys); start += maxBatch {
		batch := keys[start:min(start+maxBatch, len(keys))]
		req := driver.Request{Op: "delete", Key: batch[0], Replayable: true}
		if err := c.policy.Do(ctx, req, func(ctx context.Context) error { return c.deleteBatch(ctx, batch) }); err != nil {
			return err
		}
	}
	return nil
}

func (c *Container) deleteBatch(ctx context.Context, keys []string) error {
	if len(keys) == 1 {
		return c.Delete(ctx, keys[0], &driver.DeleteOptions{})
	}
	bb, err := c.client.NewBatchBuilder()
	if err != nil {
		return c.mapError(ctx, call{op: "delete", key: keys[0]}, err)
	}
	for _, k := range keys {
		if err := bb.Delete(k, &container.BatchDeleteOptions{DeleteOptions: blob.DeleteOptions{
			DeleteSnapshots: to.Ptr(blob.DeleteSnapshotsOptionTypeInclude),
		}}); err != nil {
			return c.mapError(ctx, call{op: "delete", key: k}, err)
		}
	}
	resp, err := c.client.SubmitBatch(ctx, bb, nil)
	if err != nil {
		return c.mapError(ctx, call{op: "delete", key: keys[0]}, err)
	}
	for i, r := range resp.Responses {
		if r.Error == nil {
			continue
		}
		key := keys[0]
		if r.ContentID != nil && *r.ContentID >= 0 && *r.ContentID < len(keys) {
			key = keys[*r.ContentID]
		} else if i < len(keys) {
			key = keys[i]
		}
		err := c.mapError(ctx, call{op: "delete", key: key}, r.Error)
		var e *driver.Error
		if errors.As(err, &e) && e.Reason == "BlobNotFound" {
			continue
		}
		return err
	}
	return nil
}

// Copy copies src to dst server-side (Copy Blob), waiting while the service reports the copy
// pending; the copy keeps the source's content type and standard headers. opts.IfNoneMatch
// and opts.IfMatch apply to dst. With opts.Metadata set it replaces the source's; Copy Blob
// cannot set a content type or a header, so with either in opts the copy is streamed through
// Get and Put instead, keeping the rest of the source's (driver.Carry). A missing src is
// ErrNotExist.
func (c *Container) Copy(ctx context.Context, src, dst string, opts *driver.PutOptions) (driver.ObjectInfo, error) {
	if opts.ContentType != "" || !opts.Headers.IsZero() {
		return driver.StreamCopy(ctx, c, src, dst, "", *opts)
	}
	o := &blob.StartCopyFromURLOptions{AccessConditions: putConditions(opts)}
	if opts.Metadata != nil {
		o.Metadata = encodeMetadata(opts.Metadata)
	}
	cl := call{op: "copy", key: dst}
	resp, err := c.blob(dst).StartCopyFromURL(ctx, c.blob(src).URL(), o)
	if err != nil {
		return driver.ObjectInfo{}, c.mapError(ctx, cl, err)
	}
	if s := deref(resp.CopyStatus); s != blob.CopyStatusTypeSuccess && s != "" {
		if err := c.awaitCopy(ctx, dst, deref(resp.CopyID)); err != nil {
			return driver.ObjectInfo{}, err
		}
	}
	info := driver.ObjectInfo{Key: dst, ETag: etagString(resp.ETag), LastModified: deref(resp.LastModified)}
	// The copy's answer has no size: a Head fills it in, when it still sees this copy.
	if head, err := c.Head(ctx, dst); err == nil && (info.ETag == "" || head.ETag == info.ETag) {
		info = head
	}
	return info, nil
}

// awaitCopy polls dst until the copy with id is no longer pending.
func (c *Container) awaitCopy(ctx context.Context, dst, id string) error {
	wait := 50 * time.Millisecond
	for {
		p, err := c.blob(dst).GetProperties(ctx, nil)
		if err != nil {
			return c.mapError(ctx, call{op: "copy", key: dst}, err)
		}
		switch s := deref(p.CopyStatus); {
		case id != "" && deref(p.CopyID) != id:
			return &driver.Error{Op: "copy", Key: dst, Kind: driver.ErrPreconditionFailed,
				Err: errors.New("another copy or write replaced the destination while the copy ran")}
		case s == blob.CopyStatusTypeSuccess:
			return nil
		case s != blob.CopyStatusTypePending:
			return &driver.Error{Op: "copy", Key: dst, Kind: driver.ErrUnavailable,
				Err: errors.New("the service ended the copy with status " + string(s) + ": " + deref(p.CopyStatusDescription))}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Second)
	}
}

func objectInfo(key string, size *int64, etag *azcore.ETag, mod *time.Time, ctype *string, md map[string]*string) driver.ObjectInfo {
	return driver.ObjectInfo{
		Key: key, Size: deref(size), ETag: etagString(etag),
		LastModified: deref(mod), ContentType: deref(ctype),
		Metadata: decodeMetadata(md),
	}
}

// standardHeaders returns the standard headers of an answer.
func standardHeaders(cacheControl, disposition, encoding, language *string) driver.Headers {
	return driver.Headers{
		CacheControl: deref(cacheControl), ContentDisposition: deref(disposition),
		ContentEncoding: deref(encoding), ContentLanguage: deref(language),
	}
}

// ifMatch returns access conditions holding If-Match etag, or nil for "".
func ifMatch(etag string) *blob.AccessConditions {
	if etag == "" {
		return nil
	}
	return &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: quoteETag(etag)}}
}

// putConditions returns the access conditions of a put: If-None-Match * or If-Match.
func putConditions(opts *driver.PutOptions) *blob.AccessConditions {
	if opts.IfNoneMatch {
		return &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: to.Ptr(azcore.ETagAny)}}
	}
	return ifMatch(opts.IfMatch)
}

// quoteETag returns the header form of the contract's unquoted etag.
func quoteETag(etag string) *azcore.ETag {
	if etag == "*" || strings.HasPrefix(etag, `"`) {
		return to.Ptr(azcore.ETag(etag))
	}
	return to.Ptr(azcore.ETag(`"` + etag + `"`))
}

func etagString(etag *azcore.ETag) string {
	if etag == nil {
		return ""
	}
	return unquote(string(*etag))
}

func unquote(s string) string { return strings.Trim(s, `"`) }

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// deref returns *p, or the zero value for nil.
func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}
