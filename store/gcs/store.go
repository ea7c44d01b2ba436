package gcs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/storage"

	"github.com/wharfdata/wharf/internal/crc32c"
	"github.com/wharfdata/wharf/store/driver"
)

// EmulatorProject is the project id MakeBucket gives an emulator when nothing names one:
// emulators accept any.
const EmulatorProject = "wharf"

// Bucket is a Google Cloud Storage bucket. It makes one HTTP request per SDK call (two for a
// resumable upload's start and each chunk): retries are the store's RetryPolicy, applied by
// the portable store (store.Store).
type Bucket struct {
	client  *storage.Client
	bucket  *storage.BucketHandle
	name    string
	loc     driver.Location
	target  target
	auth    *authTransport  // nil when anonymous
	project string          // the service-account key's project_id, if any
	key     *serviceAccount // the service-account key, which signs URLs; nil without one
	// envProject is GOOGLE_CLOUD_PROJECT, which names the project first.
	envProject string
	location   string // where MakeBucket creates the bucket (the config's region)
	partSize   int64
	log        *slog.Logger
}

// New opens the bucket of loc (a gs:// location) with o, which has passed Check. It reads the
// service-account key, if one is given, but makes no request.
func New(ctx context.Context, loc driver.Location, o *Options, c *driver.Common) (*Bucket, error) {
	t, err := o.target(c)
	if err != nil {
		return nil, err
	}
	return newBucket(ctx, loc, o, c, t)
}

func newBucket(ctx context.Context, loc driver.Location, o *Options, c *driver.Common, t target) (*Bucket, error) {
	cs, err := credentialsFor(o, c, t)
	if err != nil {
		return nil, err
	}
	client, at, err := newClient(ctx, c, t, cs)
	if err != nil {
		return nil, err
	}
	return &Bucket{
		client:     client,
		bucket:     client.Bucket(loc.Bucket),
		name:       loc.Bucket,
		loc:        loc.Root(),
		target:     t,
		auth:       at,
		project:    cs.projectID,
		key:        cs.key,
		envProject: o.project,
		location:   o.Region,
		partSize:   o.PartSize,
		log:        c.Log(),
	}, nil
}

// Describe names the bucket and, for an emulator, its endpoint; never a credential.
func (b *Bucket) Describe() driver.Description {
	d := driver.Description{Scheme: "gs", Location: b.loc.String()}
	if b.target.emulator {
		d.Endpoint = b.target.endpoint
	}
	return d
}

// Close releases the SDK client.
func (b *Bucket) Close() error { return b.client.Close() }

// MakeBucket creates the bucket, in the location the config's region names (GCS's default,
// the US multi-region, without one), in the project named by GOOGLE_CLOUD_PROJECT, else the
// service-account key's project_id, else the project of application default credentials; on
// an emulator, with none of those, in project EmulatorProject. A bucket that already exists
// and that the caller can read is success; one it cannot read (another project's) is
// ErrForbidden.
func (b *Bucket) MakeBucket(ctx context.Context) error {
	project, err := b.projectID(ctx)
	if err != nil {
		return err
	}
	var attrs *storage.BucketAttrs
	if b.location != "" {
		attrs = &storage.BucketAttrs{Location: b.location}
	}
	err = b.bucket.Create(ctx, project, attrs)
	if err == nil {
		return nil
	}
	mapped := mapError(ctx, call{op: "make-bucket", key: b.name}, err)
	var e *driver.Error
	if !errors.As(mapped, &e) || e.Status != 409 {
		return mapped
	}
	// 409: the name is taken. Ours if we can read it; GCS names are global.
	if _, aerr := b.bucket.Attrs(ctx); aerr != nil {
		e.Kind = driver.ErrForbidden
		e.Err = fmt.Errorf("bucket name %s is taken, and not readable with these credentials: %w", b.name, err)
		return e
	}
	return nil
}

// maxPresign is the longest a V4 signed URL can be valid for.
const maxPresign = 7 * 24 * time.Hour

// PresignGet signs a V4 URL reading key, valid for expiry (at most 7 days), with the
// service-account key the store was opened with: application default credentials and an
// anonymous store have no private key here to sign with (ErrUnsupported). On an emulator
// the URL names the emulator's host.
func (b *Bucket) PresignGet(ctx context.Context, key string, expiry time.Duration) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	switch {
	case b.key == nil:
		return "", &driver.Error{Op: "presign", Key: key, Kind: driver.ErrUnsupported,
			Err: fmt.Errorf("a signed URL needs the private key of a service account: give %s", serviceAccountField)}
	case expiry <= 0 || expiry > maxPresign:
		return "", &driver.Error{Op: "presign", Key: key, Kind: driver.ErrConfig,
			Err: fmt.Errorf("expiry %s: Cloud Storage signs URLs valid for at most 7 days", expiry)}
	}
	opts := &storage.SignedURLOptions{GoogleAccessID: b.key.email, PrivateKey: b.key.privateKey, Method: http.MethodGet,
		Expires: time.Now().Add(expiry), Scheme: storage.SigningSchemeV4}
	if b.target.emulator {
		u, err := url.Parse(b.target.endpoint)
		if err != nil {
			return "", &driver.Error{Op: "presign", Key: key, Kind: driver.ErrConfig, Err: err}
		}
		opts.Hostname, opts.Insecure = u.Host, u.Scheme == "http"
	}
	u, err := b.bucket.SignedURL(key, opts)
	if err != nil {
		// The library's error is not passed on: it may quote the key's content.
		return "", &driver.Error{Op: "presign", Key: key, Kind: driver.ErrConfig,
			Err: fmt.Errorf("signing with %s %s failed", serviceAccountField, b.key.ref)}
	}
	return u, nil
}

// RemoveBucket removes the bucket when it is empty: GCS refuses one holding objects with a
// 409 (fake-gcs-server with a 412), which is ErrBucketNotEmpty.
func (b *Bucket) RemoveBucket(ctx context.Context) error {
	err := b.bucket.Delete(ctx)
	if err == nil {
		return nil
	}
	mapped := mapError(ctx, call{op: "remove-bucket", key: b.name}, err)
	var e *driver.Error
	switch {
	case !errors.As(mapped, &e):
	case e.Status == 409 || e.Status == 412:
		e.Kind, e.Fault = driver.ErrBucketNotEmpty, driver.FaultNone
	case e.Status == 404:
		e.Kind = driver.ErrBucketMissing
	}
	return mapped
}

// projectID finds the project a new bucket goes in.
func (b *Bucket) projectID(ctx context.Context) (string, error) {
	if b.envProject != "" {
		return b.envProject, nil
	}
	if b.project != "" {
		return b.project, nil
	}
	if b.auth != nil {
		if creds, err := b.auth.credentials(); err == nil {
			if p, err := creds.ProjectID(ctx); err == nil && p != "" {
				return p, nil
			}
		}
	}
	if b.target.emulator {
		return EmulatorProject, nil
	}
	return "", &driver.Error{Op: "make-bucket", Key: b.name, Kind: driver.ErrConfig,
		Err: errors.New("no project to create the bucket in: set GOOGLE_CLOUD_PROJECT, or use a service-account key or default credentials that name one")}
}

// Copy copies src to dst server-side (a rewrite). opts.IfNoneMatch and opts.IfMatch become
// generation preconditions on dst, where the server honours them (fake-gcs-server ignores
// them). Without a content type, headers or metadata in opts the copy keeps the source's. With
// any of them, the source is read first (one request) for what opts leaves unset
// (driver.Carry), and the rewrite is pinned to that generation and sets every attribute. A
// rewrite takes the source's value for an attribute its request leaves empty, so a copy that
// must remove one the source has (a header, a metadata key) is streamed through Get and Put
// instead. A missing src is ErrNotExist.
func (b *Bucket) Copy(ctx context.Context, src, dst string, opts *driver.PutOptions) (driver.ObjectInfo, error) {
	c := call{op: "copy", key: dst}
	dh, err := b.written(c, opts)
	if err != nil {
		return driver.ObjectInfo{}, err
	}
	from := b.bucket.Object(src)
	var o driver.PutOptions
	if opts.Replaces() {
		head, err := b.head(ctx, call{op: "copy", key: src})
		if err != nil {
			return driver.ObjectInfo{}, err
		}
		o = *opts
		driver.Carry(&o, head)
		if removes(&o, head) {
			return driver.StreamCopy(ctx, b, src, dst, head.ETag, o)
		}
		gen, _ := strconv.ParseInt(head.ETag, 10, 64)
		from = from.Generation(gen)
	}
	cp := dh.CopierFrom(from)
	cp.ContentType, cp.Metadata = o.ContentType, o.Metadata
	cp.CacheControl, cp.ContentDisposition = o.Headers.CacheControl, o.Headers.ContentDisposition
	cp.ContentEncoding, cp.ContentLanguage = o.Headers.ContentEncoding, o.Headers.ContentLanguage
	attrs, err := cp.Run(ctx)
	if err != nil {
		return driver.ObjectInfo{}, b.notFound(ctx, c, mapError(ctx, c, err))
	}
	return objectInfo(dst, attrs), nil
}

// removes reports whether writing o over a copy of head removes an attribute head has, which a
// rewrite cannot do: a standard header, or a metadata key (but a put-id, which a rewrite may
// keep as a plain copy does).
func removes(o *driver.PutOptions, head driver.ObjectInfo) bool {
	h, was := o.Headers, head.Headers
	if h.CacheControl == "" && was.CacheControl != "" || h.ContentDisposition == "" && was.ContentDisposition != "" ||
		h.ContentEncoding == "" && was.ContentEncoding != "" || h.ContentLanguage == "" && was.ContentLanguage != "" {
		return true
	}
	for k := range head.Metadata {
		if _, ok := o.Metadata[k]; !ok && k != driver.MetaPutID {
			return true
		}
	}
	return false
}

// written returns the handle a put or copy writes c.key through, with the generation
// precondition of opts: DoesNotExist for create-if-absent, GenerationMatch for
// replace-if-match. An IfMatch that is not a generation matches no object:
// ErrPreconditionFailed without a request.
func (b *Bucket) written(c call, opts *driver.PutOptions) (*storage.ObjectHandle, error) {
	o := b.bucket.Object(c.key)
	switch {
	case opts.IfNoneMatch:
		return o.If(storage.Conditions{DoesNotExist: true}), nil
	case opts.IfMatch != "":
		gen, err := parseGeneration(c, opts.IfMatch)
		if err != nil {
			return nil, err
		}
		return o.If(storage.Conditions{GenerationMatch: gen}), nil
	}
	return o, nil
}

// parseGeneration reads an ETag as a GCS generation (a positive decimal number).
func parseGeneration(c call, etag string) (int64, error) {
	gen, err := strconv.ParseInt(strings.Trim(etag, `"`), 10, 64)
	if err != nil || gen <= 0 {
		return 0, &driver.Error{Op: c.op, Key: c.key, Kind: driver.ErrPreconditionFailed,
			Err: fmt.Errorf("ETag %q is not a GCS generation, so no object matches it", etag)}
	}
	return gen, nil
}

// etag is the contract's ETag of a generation ("" when the answer carried none).
func etag(gen int64) string {
	if gen <= 0 {
		return ""
	}
	return strconv.FormatInt(gen, 10)
}

// objectInfo converts SDK attributes. LastModified is kept to the second, as reads report it
// (Last-Modified), so that Head, List and Get agree.
func objectInfo(key string, a *storage.ObjectAttrs) driver.ObjectInfo {
	return driver.ObjectInfo{
		Key: key, Size: a.Size, ETag: etag(a.Generation), LastModified: seconds(a.Updated),
		ContentType: a.ContentType, Metadata: lowerKeys(a.Metadata), CRC32C: crcString(a.CRC32C),
		StorageClass: a.StorageClass,
		Headers: driver.Headers{
			CacheControl: a.CacheControl, ContentDisposition: a.ContentDisposition,
			ContentEncoding: a.ContentEncoding, ContentLanguage: a.ContentLanguage,
		},
	}
}

// crcString returns GCS's CRC-32C of an object as ObjectInfo.CRC32C gives it; 0, which is
// also what an answer without one holds, reads as unknown (the empty object's is 0 too).
func crcString(c uint32) string {
	if c == 0 {
		return ""
	}
	return crc32c.Format(c)
}

func seconds(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.Truncate(time.Second).UTC()
}

// lowerKeys returns md with lowercase keys (the contract's), or nil when empty. GCS keeps the
// case a writer gave; wharf writes lowercase keys.
func lowerKeys(md map[string]string) map[string]string {
	if len(md) == 0 {
		return nil
	}
	out := make(map[string]string, len(md))
	for k, v := range md {
		out[strings.ToLower(k)] = v
	}
	return out
}
