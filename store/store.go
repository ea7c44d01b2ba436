package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/wharfdata/wharf/internal/crc32c"
	"github.com/wharfdata/wharf/store/driver"
	"golang.org/x/sync/errgroup"
)

// Store is the portable store every caller holds: one backend's bucket (a driver.Bucket) seen
// through the one implementation of what no backend repeats. Every key, prefix, metadata map
// and option combination is checked before the bucket sees it (ErrKeyInvalid, ErrConfig); a
// store opened below its root (s3://bucket/prefix/) serves the keys below that prefix; every
// call follows the retry policy, and a read whose body breaks resumes pinned to the ETag it
// started with; a conditional put carries a fresh wharf-put-id; and where the backend lacks a
// capability it is done another way (Copy streams through Get and Put, DeleteMany deletes one
// key at a time) or refused with ErrUnsupported (MakeBucket).
//
// The bucket's optional capabilities are learned once, when the Store is made, from the
// outermost of its decorators that has each; nothing is forwarded by hand.
//
// A Store is safe for concurrent use. Its methods document the error kinds they return; every
// failure is an *Error (errors.Is for the kind), and a cancelled context passes through as the
// context's own error.
type Store struct {
	b      driver.Bucket
	prefix string // "" or ending in '/'
	policy *driver.RetryPolicy
	desc   driver.Description

	copier  driver.Copier
	batch   driver.BatchDeleter
	maker   driver.BucketMaker
	remover driver.BucketRemover
	signer  driver.Presigner
	uploads driver.UploadLister
	hashes  driver.HashVerifier
	md5s    driver.MD5Tagger
	local   driver.LocalFiler
}

// New returns the portable store over b, following policy (nil: the default policy).
func New(b driver.Bucket, policy *RetryPolicy) *Store {
	if policy == nil {
		policy = driver.DefaultRetryPolicy()
	}
	s := &Store{b: b, policy: policy, desc: b.Describe()}
	s.copier, _ = driver.Find[driver.Copier](b)
	s.batch, _ = driver.Find[driver.BatchDeleter](b)
	s.maker, _ = driver.Find[driver.BucketMaker](b)
	s.remover, _ = driver.Find[driver.BucketRemover](b)
	s.signer, _ = driver.Find[driver.Presigner](b)
	s.uploads, _ = driver.Find[driver.UploadLister](b)
	s.hashes, _ = driver.Find[driver.HashVerifier](b)
	s.md5s, _ = driver.Find[driver.MD5Tagger](b)
	s.local, _ = driver.Find[driver.LocalFiler](b)
	return s
}

// Sub returns the store of the keys below prefix: key k of the result is prefix/k here.
// Listings hand keys back without the prefix; errors name the full key, which is what a user
// looks for in the bucket. An empty prefix returns s.
func (s *Store) Sub(prefix string) *Store {
	prefix = strings.Trim(prefix, "/")
	if prefix == "" {
		return s
	}
	c := *s
	c.prefix = s.prefix + prefix + "/"
	c.desc.Location = strings.TrimSuffix(s.desc.Location, "/") + "/" + prefix + "/"
	return &c
}

// Prefix is the prefix of the store's keys inside its bucket ("" at the root, else ending in
// '/').
func (s *Store) Prefix() string { return s.prefix }

// Describe names the store (its URL, endpoint and, for a file store, the mount type) without
// any secret.
func (s *Store) Describe() Description { return s.desc }

// LocalPath returns the path on this machine's file system of key's file and true, when the
// store keeps its objects as local files (driver.LocalFiler: the file store); "" and false
// otherwise. An empty key names the store's own directory.
func (s *Store) LocalPath(key string) (string, bool) {
	if s.local == nil {
		return "", false
	}
	return s.local.LocalPath(s.prefix + key), true
}

// VerifyByHash reports whether an object's ETag here does not prove its bytes and reading it
// whole is cheap (driver.HashVerifier: the file store): a caller that vouches for an
// object's bytes hashes it rather than compare ETags.
func (s *Store) VerifyByHash() bool { return s.hashes != nil && s.hashes.VerifyByHash() }

// ETagsAreMD5 reports whether an object put here whole has the MD5 of its bytes as its ETag
// (driver.MD5Tagger: S3 and S3-compatible stores), so that two such ETags compare contents.
func (s *Store) ETagsAreMD5() bool { return s.md5s != nil && s.md5s.ETagsAreMD5() }

// checkClass refuses a storage class or an encryption for a backend that has neither.
func (s *Store) checkClass(op, key string, opts *PutOptions) error {
	if opts == nil || opts.StorageClass == "" && opts.Encryption.IsZero() {
		return nil
	}
	if c, ok := driver.Find[driver.Classer](s.b); ok && c.StorageClasses() {
		return nil
	}
	return &Error{Op: op, Key: key, Kind: ErrUnsupported,
		Err: fmt.Errorf("%s stores no objects in classes and encrypts none on request: leave out the storage class and encryption", s.desc.Scheme)}
}

// CheckChecksums asks the backend whether the server refuses a put whose CRC-32C does not
// match its body, with a put at key that it deletes after (driver.ChecksumChecker); a backend
// that sends no checksum for the server to check is ErrUnsupported.
func (s *Store) CheckChecksums(ctx context.Context, key string) (bool, string, error) {
	if err := driver.ValidateKey("put", key); err != nil {
		return false, "", err
	}
	c, ok := driver.Find[driver.ChecksumChecker](s.b)
	if !ok {
		return false, "", &Error{Op: "put", Key: key, Kind: ErrUnsupported, Err: errors.New("the store is sent no checksum to check")}
	}
	return c.CheckChecksums(ctx, s.prefix+key)
}

// Close releases what the store's bucket holds.
func (s *Store) Close() error { return s.b.Close() }

// Get opens the object at key; see driver.Bucket.Get for the contract. A body that breaks
// mid-stream with a transport fault is resumed by a ranged Get pinned to the ETag it started
// with, within the policy's transport attempts; an object that changed meanwhile fails the
// read with ErrPreconditionFailed rather than splice two versions.
func (s *Store) Get(ctx context.Context, key string, opts *GetOptions) (*Object, error) {
	if err := driver.ValidateKey("get", key); err != nil {
		return nil, err
	}
	var o GetOptions
	if opts != nil {
		o = *opts
	}
	if o.Offset < 0 || o.Length < 0 {
		return nil, &Error{Op: "get", Key: key, Kind: ErrConfig, Err: fmt.Errorf("negative range %d+%d", o.Offset, o.Length)}
	}
	obj, err := s.get(ctx, s.prefix+key, &o)
	if err != nil {
		return nil, err
	}
	obj.Info.Key = key
	obj.Info.LiftCRC32C()
	return &Object{Info: obj.Info, ReadCloser: &resumingBody{
		ctx: ctx, s: s, key: s.prefix + key, opts: o, etag: obj.Info.ETag, body: obj.ReadCloser,
	}}, nil
}

func (s *Store) get(ctx context.Context, full string, opts *GetOptions) (obj *Object, err error) {
	err = s.policy.Do(ctx, driver.Request{Op: "get", Key: full, Replayable: true}, func(ctx context.Context) error {
		obj, err = s.b.Get(ctx, full, opts)
		return err
	})
	return obj, err
}

// Head returns the object's metadata: ErrNotExist when absent, ErrBucketMissing when the
// bucket is.
func (s *Store) Head(ctx context.Context, key string) (info ObjectInfo, err error) {
	if err := driver.ValidateKey("head", key); err != nil {
		return ObjectInfo{}, err
	}
	full := s.prefix + key
	err = s.policy.Do(ctx, driver.Request{Op: "head", Key: full, Replayable: true}, func(ctx context.Context) error {
		info, err = s.b.Head(ctx, full)
		return err
	})
	info.Key = key
	info.LiftCRC32C()
	return info, err
}

// Put writes body at key; see driver.Bucket.Put for the contract. A conditional put carries a
// fresh wharf-put-id in its metadata (unless the caller gave one), and an ErrOutcomeUnknown
// names it in Error.PutID for ResolvePut. A put is retried after a transport fault or
// throttling only when its body can be sent again (an io.Seeker, or none) and it is not
// conditional. With opts.CRC32C the body is checked as the backend reads it, and a body with
// another CRC-32C fails the put with ErrChecksumMismatch before the backend commits anything.
// A storage class or an encryption asked of a backend without them is ErrUnsupported.
func (s *Store) Put(ctx context.Context, key string, body io.Reader, opts *PutOptions) (info ObjectInfo, err error) {
	if err := driver.ValidateKey("put", key); err != nil {
		return ObjectInfo{}, err
	}
	opts, err = checkPut(key, opts, true)
	if err != nil {
		return ObjectInfo{}, err
	}
	full := s.prefix + key
	if err := s.checkClass("put", key, opts); err != nil {
		return ObjectInfo{}, err
	}
	if opts.CRC32C != "" {
		if _, err := crc32c.Parse(opts.CRC32C); err != nil {
			return ObjectInfo{}, &Error{Op: "put", Key: key, Kind: ErrConfig, Err: err}
		}
		body = checkBody(body, key, opts.CRC32C)
	}
	seeker, replayable := body.(io.Seeker)
	if body == nil {
		replayable = true
	}
	var start int64
	if seeker != nil {
		if start, err = seeker.Seek(0, io.SeekCurrent); err != nil {
			replayable = false
		}
	}
	first := true
	req := driver.Request{Op: "put", Key: full, Conditional: opts.Conditional(), Replayable: replayable}
	err = s.policy.Do(ctx, req, func(ctx context.Context) error {
		if !first && seeker != nil {
			if _, err := seeker.Seek(start, io.SeekStart); err != nil {
				return err
			}
		}
		first = false
		info, err = s.b.Put(ctx, full, body, opts)
		return err
	})
	var e *Error
	if err != nil && errors.As(err, &e) && e.PutID == "" {
		e.PutID = opts.Metadata[MetaPutID]
	}
	info.Key = key
	info.LiftCRC32C()
	return info, err
}

// checkPut validates the options of a put and, with putID, gives a conditional put its put-id.
func checkPut(key string, opts *PutOptions, putID bool) (*PutOptions, error) {
	if opts == nil {
		return &PutOptions{}, nil
	}
	if opts.IfNoneMatch && opts.IfMatch != "" {
		return nil, &Error{Op: "put", Key: key, Kind: ErrConfig, Err: fmt.Errorf("IfNoneMatch and IfMatch together")}
	}
	if opts.PartSize < 0 || opts.Concurrency < 0 {
		return nil, &Error{Op: "put", Key: key, Kind: ErrConfig, Err: fmt.Errorf("negative part size %d or concurrency %d", opts.PartSize, opts.Concurrency)}
	}
	if err := driver.ValidateMetadata("put", key, opts.Metadata); err != nil {
		return nil, err
	}
	if putID && opts.Conditional() && opts.Metadata[MetaPutID] == "" {
		o := *opts
		o.Metadata = maps.Clone(opts.Metadata)
		if o.Metadata == nil {
			o.Metadata = map[string]string{}
		}
		o.Metadata[MetaPutID] = driver.NewPutID()
		opts = &o
	}
	return opts, nil
}

// Delete removes key; deleting a missing key succeeds. With opts.IfMatch it is conditional
// where the server enforces it (the probe tells whether it does).
func (s *Store) Delete(ctx context.Context, key string, opts *DeleteOptions) error {
	if err := driver.ValidateKey("delete", key); err != nil {
		return err
	}
	full := s.prefix + key
	if opts == nil {
		opts = &DeleteOptions{}
	}
	return s.policy.Do(ctx, driver.Request{Op: "delete", Key: full, Replayable: true}, func(ctx context.Context) error {
		return s.b.Delete(ctx, full, opts)
	})
}

// List returns one page of the keys under opts.Prefix, sorted; pass Page.Next back as
// opts.Token for the next page. Walk follows every page.
func (s *Store) List(ctx context.Context, opts *ListOptions) (page Page, err error) {
	var o ListOptions
	if opts != nil {
		o = *opts
	}
	if err := driver.ValidatePrefix("list", o.Prefix); err != nil {
		return Page{}, err
	}
	if o.Delimiter != "" && o.Delimiter != "/" {
		return Page{}, &Error{Op: "list", Key: o.Prefix, Kind: ErrUnsupported, Err: fmt.Errorf("delimiter %q (only \"/\")", o.Delimiter)}
	}
	o.Prefix = s.prefix + o.Prefix // Token and Next are the backend's own: passed as they are
	err = s.policy.Do(ctx, driver.Request{Op: "list", Key: o.Prefix, Replayable: true}, func(ctx context.Context) error {
		page, err = s.b.List(ctx, &o)
		return err
	})
	if err != nil {
		return Page{}, err
	}
	for i := range page.Objects {
		page.Objects[i].Key = strings.TrimPrefix(page.Objects[i].Key, s.prefix)
		page.Objects[i].LiftCRC32C()
	}
	for i := range page.Prefixes {
		page.Prefixes[i] = strings.TrimPrefix(page.Prefixes[i], s.prefix)
	}
	return page, nil
}

// Walk yields every object under prefix in sorted order, following every page. It stops at
// the first error, which it yields with a zero ObjectInfo.
func (s *Store) Walk(ctx context.Context, prefix string) iter.Seq2[ObjectInfo, error] {
	return func(yield func(ObjectInfo, error) bool) {
		opts := ListOptions{Prefix: prefix}
		for {
			page, err := s.List(ctx, &opts)
			if err != nil {
				yield(ObjectInfo{}, err)
				return
			}
			for _, o := range page.Objects {
				if !yield(o, nil) {
					return
				}
			}
			if page.Next == "" {
				return
			}
			opts.Token = page.Next
		}
	}
}

// ListAll returns every object under prefix.
func (s *Store) ListAll(ctx context.Context, prefix string) ([]ObjectInfo, error) {
	var out []ObjectInfo
	for o, err := range s.Walk(ctx, prefix) {
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// Copy copies src to dst in this store: server-side where the backend can, else (and always
// when opts carries a condition, a storage class or an encryption) streamed through Get and Put, never staged on disk. The copy
// keeps the source's content type, standard headers and metadata, each unless opts gives its
// own (see Carry). A streamed copy's put gets a fresh put-id like any conditional put; a
// server-side copy adds one only to metadata opts gives.
func (s *Store) Copy(ctx context.Context, src, dst string, opts *PutOptions) (info ObjectInfo, err error) {
	if err := driver.ValidateKey("copy", src); err != nil {
		return ObjectInfo{}, err
	}
	if err := driver.ValidateKey("copy", dst); err != nil {
		return ObjectInfo{}, err
	}
	if s.copier == nil || opts != nil && (opts.Conditional() || opts.StorageClass != "" || !opts.Encryption.IsZero()) {
		// Several servers ignore a condition on a server-side copy and overwrite (MinIO,
		// fake-gcs-server): a conditional copy is a Get and a conditional Put instead, which
		// every store the probe proves cas enforces.
		return CopyStream(ctx, s, src, s, dst, opts)
	}
	opts, err = checkPut(dst, opts, opts != nil && opts.Metadata != nil)
	if err != nil {
		return ObjectInfo{}, err
	}
	req := driver.Request{Op: "copy", Key: s.prefix + dst, Conditional: opts.Conditional(), Replayable: true}
	err = s.policy.Do(ctx, req, func(ctx context.Context) error {
		info, err = s.copier.Copy(ctx, s.prefix+src, s.prefix+dst, opts)
		return err
	})
	info.Key = dst
	info.LiftCRC32C()
	return info, err
}

// CopyStream copies src of from to dst of to through Get and Put, keeping the content type,
// standard headers and metadata unless opts gives its own. It is how objects move between
// two stores.
func CopyStream(ctx context.Context, from *Store, src string, to *Store, dst string, opts *PutOptions) (ObjectInfo, error) {
	obj, err := from.Get(ctx, src, nil)
	if err != nil {
		return ObjectInfo{}, err
	}
	defer obj.Close()
	o := PutOptions{}
	if opts != nil {
		o = *opts
	}
	o.Size = obj.Info.Size
	Carry(&o, obj.Info)
	if o.CRC32C == "" {
		o.CRC32C = obj.Info.CRC32C // the put checks the bytes it read against the source's
	}
	return to.Put(ctx, dst, obj, &o)
}

// Carry fills what o leaves unset from the source object, as a copy keeps it, field by field:
// the content type, the standard headers (any set in o replace all of the source's) and the
// user metadata (without the source's wharf-put-id). See driver.Carry.
func Carry(o *PutOptions, src ObjectInfo) { driver.Carry(o, src) }

// deleteConcurrency bounds the single deletes DeleteMany has in flight on a backend without
// batch deletes.
const deleteConcurrency = 16

// DeleteMany removes keys: in batches where the backend can, else by single deletes, up to
// 16 at a time. A missing key is not an error; the first failure stops it and names its key.
func (s *Store) DeleteMany(ctx context.Context, keys []string) error {
	for _, k := range keys {
		if err := driver.ValidateKey("delete", k); err != nil {
			return err
		}
	}
	if s.batch == nil {
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(deleteConcurrency)
		for _, k := range keys {
			if gctx.Err() != nil {
				break
			}
			g.Go(func() error { return s.Delete(gctx, k, nil) })
		}
		err := g.Wait()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	full := keys
	if s.prefix != "" {
		full = make([]string, len(keys))
		for i, k := range keys {
			full[i] = s.prefix + k
		}
	}
	return s.batch.DeleteMany(ctx, full)
}

// MakeBucket creates the bucket, container or directory the store is in, where the backend
// can (ErrUnsupported elsewhere). One that exists and is the caller's is success.
func (s *Store) MakeBucket(ctx context.Context) error {
	if s.maker == nil {
		return &Error{Op: "make-bucket", Key: s.desc.Location, Kind: ErrUnsupported}
	}
	return s.policy.Do(ctx, driver.Request{Op: "make-bucket", Key: s.desc.Location, Replayable: true}, s.maker.MakeBucket)
}

// PresignGet returns a URL that lets anyone who holds it read key until expiry from now,
// with no credentials of their own, where the backend can sign one (ErrUnsupported
// elsewhere). It makes no request: the key need not exist yet.
func (s *Store) PresignGet(ctx context.Context, key string, expiry time.Duration) (string, error) {
	if err := driver.ValidateKey("presign", key); err != nil {
		return "", err
	}
	if s.signer == nil {
		return "", &Error{Op: "presign", Key: s.desc.Location + key, Kind: ErrUnsupported,
			Err: fmt.Errorf("%s stores cannot sign a URL", s.desc.Scheme)}
	}
	return s.signer.PresignGet(ctx, s.prefix+key, expiry)
}

// RemoveBucket removes the bucket, container or directory the store is in, where the backend
// can (ErrUnsupported elsewhere), only when it is empty: one holding an object is
// ErrBucketNotEmpty, a missing one ErrBucketMissing.
func (s *Store) RemoveBucket(ctx context.Context) error {
	if s.remover == nil {
		return &Error{Op: "remove-bucket", Key: s.desc.Location, Kind: ErrUnsupported}
	}
	return s.policy.Do(ctx, driver.Request{Op: "remove-bucket", Key: s.desc.Location}, s.remover.RemoveBucket)
}

// ResolvePut settles a conditional put that failed with ErrOutcomeUnknown (or with
// ErrPreconditionFailed after a resend) by one Head: when the object at key carries putID in
// its wharf-put-id metadata, the put landed and ResolvePut returns its info and true. An
// absent object, or one with another put-id, means it did not land.
func (s *Store) ResolvePut(ctx context.Context, key, putID string) (ObjectInfo, bool, error) {
	return driver.ResolvePut(ctx, s.Head, key, putID)
}

// Bucket returns the driver underneath, for tests and probes that must reach past the
// portable store.
func (s *Store) Bucket() driver.Bucket { return s.b }

// Upload is an incomplete upload (see ListUploads).
type Upload = driver.Upload

// ListUploads returns the incomplete uploads (S3 multipart uploads never completed or
// aborted, Azure blobs with uncommitted blocks only) whose key starts with prefix, keys
// relative to the store, in key order. A backend that cannot list them (GCS resumable
// uploads, the file and mem stores, which have none) is ErrUnsupported; a missing bucket is
// ErrBucketMissing.
func (s *Store) ListUploads(ctx context.Context, prefix string) ([]Upload, error) {
	if err := driver.ValidatePrefix("list-uploads", prefix); err != nil {
		return nil, err
	}
	if s.uploads == nil {
		err := fmt.Errorf("%s stores keep no incomplete uploads that can be listed", s.desc.Scheme)
		if b, ok := driver.Lookup(s.desc.Scheme); ok && b.NoUploads != "" {
			err = fmt.Errorf("%w (%s)", err, b.NoUploads)
		}
		return nil, &Error{Op: "list-uploads", Key: s.desc.Location + prefix, Kind: ErrUnsupported, Err: err}
	}
	ups, err := s.uploads.ListUploads(ctx, s.prefix+prefix)
	if err != nil {
		return nil, err
	}
	out := ups[:0]
	for _, u := range ups {
		if k, ok := strings.CutPrefix(u.Key, s.prefix); ok {
			u.Key = k
			out = append(out, u)
		}
	}
	return out, nil
}

// AbortUpload aborts the incomplete upload u (as ListUploads returned it), discarding its
// parts; one already gone is success. ErrUnsupported where ListUploads is.
func (s *Store) AbortUpload(ctx context.Context, u Upload) error {
	if err := driver.ValidateKey("abort-upload", u.Key); err != nil {
		return err
	}
	if s.uploads == nil {
		return &Error{Op: "abort-upload", Key: u.Key, Kind: ErrUnsupported,
			Err: fmt.Errorf("%s stores keep no incomplete uploads", s.desc.Scheme)}
	}
	u.Key = s.prefix + u.Key
	return s.uploads.AbortUpload(ctx, u)
}

// WalkTree yields every object under prefix, as Walk does but in no set order, listing the
// tree's directories in parallel with up to width requests in flight (width < 1: 16). It
// descends by '/' (delimited listings, whose objects it yields as it goes) until it has width
// prefixes to list or has gone three levels down, then lists each of them whole, at once: a
// tree of many directories lists in about the time of its largest one, where Walk takes the
// sum of its pages one after another. A flat prefix costs what Walk does. The first error
// ends the walk; so does a yield returning false, which cancels what is in flight.
func (s *Store) WalkTree(ctx context.Context, prefix string, width int) iter.Seq2[ObjectInfo, error] {
	if width < 1 {
		width = 16
	}
	return func(yield func(ObjectInfo, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		type item struct {
			o   ObjectInfo
			err error
		}
		out := make(chan item, 1024)
		send := func(it item) bool {
			select {
			case out <- it:
				return true
			case <-ctx.Done():
				return false
			}
		}
		sem := make(chan struct{}, width)
		// list lists one prefix whole (delim "") or one level of it (delim "/"), sending its
		// objects, and returns the sub-prefixes of a delimited listing.
		list := func(p, delim string) ([]string, bool) {
			var subs []string
			opts := ListOptions{Prefix: p, Delimiter: delim}
			for {
				select {
				case sem <- struct{}{}:
				case <-ctx.Done():
					return nil, false
				}
				page, err := s.List(ctx, &opts)
				<-sem
				if err != nil {
					send(item{err: err})
					return nil, false
				}
				for _, o := range page.Objects {
					if !send(item{o: o}) {
						return nil, false
					}
				}
				subs = append(subs, page.Prefixes...)
				if page.Next == "" {
					return subs, true
				}
				opts.Token = page.Next
			}
		}
		go func() {
			defer close(out)
			frontier := []string{prefix}
			for depth := 0; depth < 3 && len(frontier) > 0 && len(frontier) < width; depth++ {
				var mu sync.Mutex
				var next []string
				ok := true
				var wg sync.WaitGroup
				for _, p := range frontier {
					wg.Go(func() {
						subs, fine := list(p, "/")
						mu.Lock()
						next, ok = append(next, subs...), ok && fine
						mu.Unlock()
					})
				}
				wg.Wait()
				if !ok {
					return
				}
				frontier = next
			}
			var wg sync.WaitGroup
			for _, p := range frontier {
				wg.Go(func() { list(p, "") })
			}
			wg.Wait()
		}()
		for it := range out {
			if !yield(it.o, it.err) || it.err != nil {
				cancel()
				for range out { // let the listers see the cancel and end
				}
				return
			}
		}
		if err := ctx.Err(); err != nil {
			yield(ObjectInfo{}, err)
		}
	}
}
