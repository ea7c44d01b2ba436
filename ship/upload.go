package ship

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/spool"
	"github.com/wharfdata/wharf/store"
)

// ErrObjectKeyCollision: an object with other content is at the key of a file being shipped.
// The keys are deterministic, so this means another spool with the same epoch, or another
// machine with the same node id, shipped there: the service stops rather than overwrite.
var ErrObjectKeyCollision = errcode.New(errcode.Def{Name: "WHARF_OBJECT_KEY_COLLISION",
	Text: "an object with different content is already at the key", Exit: errcode.ExitFailed, Class: errcode.Fatal, Standing: true, Section: "Ship",
	Meaning: "An object with other content (another size or `wharf-sha256`) is already at the key of a file being shipped. Keys are unique per spool epoch and node id, so another spool with the same epoch (a copied spool directory) or another machine with the same node id wrote there. Shipping stops for good; nothing is overwritten and the file is kept. The message names the file, the key, both sizes and sha256s.",
	Remedy:  "Fix the misconfiguration (give each machine its own `node`, never copy a spool directory), then restart. Do not delete the object to make way: it is someone else's data."})

// The outcomes of an upload, as metrics, logs and the spool's uploaded record name them.
const (
	OutcomeOK            = "ok"             // the service wrote the object
	OutcomeConflictEqual = "conflict_equal" // the object was already there, with the same content
	OutcomeRetry         = "retry"          // the attempt failed and the file will be tried again
	OutcomeFatal         = "fatal"          // the attempt failed for good: the service stops
)

// result is what one successful upload did.
type result struct {
	key     string // relative to the store
	etag    string
	outcome string
}

// upload makes one attempt at shipping f and reports what happened. The error is fatal
// (isFatal) or transient.
func (s *Shipper) upload(ctx context.Context, f spool.File) (result, error) {
	if err := checkFile(f); err != nil {
		return result{}, &store.Error{Op: "ship", Key: f.Path, Kind: store.ErrConfig, Err: err}
	}
	key := s.key(f)
	large := f.Size > s.cfg.MultipartThreshold
	if large || s.mode == PutOverwrite {
		// A multipart upload costs a lot to send for nothing, and an overwrite would replace
		// what is there: look first.
		info, err := s.st.Head(ctx, key)
		switch {
		case err == nil:
			return s.existing(ctx, f, key, info)
		case !errors.Is(err, store.ErrNotExist):
			return result{}, err
		}
	}
	if large {
		s.abortStale(ctx, key)
	}
	b, err := openBody(f, s.cfg.PartSize)
	if err != nil {
		return result{}, err
	}
	defer b.Close()
	info, err := s.put(ctx, f, key, b, large, "")
	switch {
	case errors.Is(err, store.ErrPreconditionFailed), errors.Is(err, store.ErrOutcomeUnknown):
		return s.refused(ctx, f, key, err)
	case err != nil:
		return result{}, err
	}
	if err := s.sent(ctx, f, key, info, b); err != nil {
		return result{}, err
	}
	if s.mode == PutOverwrite {
		return s.verifyAfter(ctx, f, key)
	}
	return result{key: key, etag: info.ETag, outcome: OutcomeOK}, nil
}

// sent checks that the bytes just written at key are the bytes the spool recorded: by the
// hash made as they were read in order, by reading the file again for the parts read in
// place, or, when neither shows it, by reading the object back.
func (s *Shipper) sent(ctx context.Context, f spool.File, key string, info store.ObjectInfo, b *body) error {
	want := strings.ToLower(f.SHA256)
	if b.complete() {
		if got := b.sum(); got != want {
			return s.changed(ctx, f, key, info, got)
		}
		return nil
	}
	if b.inPlace() {
		got, changed, err := b.verifyInPlace()
		switch {
		case err == nil && (changed || got != want):
			return s.changed(ctx, f, key, info, got)
		case err == nil:
			return nil
		case !errors.Is(err, errUnverified):
			return err
		}
	}
	s.log.Debug("the bytes sent cannot be compared with the file's: reading the object back", "file_id", f.ID, "key", s.where(key))
	got, err := s.hashObject(ctx, key, info.ETag)
	if err != nil {
		return err
	}
	if got != want {
		return s.changed(ctx, f, key, info, got)
	}
	return nil
}

// abortStale aborts the incomplete uploads at key before a large file is sent there: an
// earlier run killed mid-upload leaves its multipart upload open, and billed. They are this
// service's own: the key holds the spool's epoch and the node id, no other writer uses it, and
// this process (the spool's one owner) has no upload of the file under way. A store that
// cannot list uploads is skipped; a failure to list or abort is logged and does not hold the
// upload back.
func (s *Shipper) abortStale(ctx context.Context, key string) {
	ups, err := s.st.ListUploads(ctx, key)
	switch {
	case errors.Is(err, store.ErrUnsupported):
		return
	case err != nil:
		s.log.Warn("could not list the incomplete uploads an earlier run may have left at the key", "key", s.where(key), "error", err)
		return
	}
	for _, u := range ups {
		if u.Key != key {
			continue
		}
		if err := s.st.AbortUpload(ctx, u); err != nil {
			s.log.Warn("could not abort an incomplete upload an earlier run left at the key", "key", s.where(key),
				"upload_id", u.ID, "initiated", u.Initiated, "error", err)
			continue
		}
		s.m.aborted.Inc()
		s.log.Info("aborted an incomplete upload an earlier run left at the key", "key", s.where(key),
			"upload_id", u.ID, "initiated", u.Initiated)
	}
}

// verifyAfter reads back an overwrite put: without conditional writes another writer may
// have raced it.
func (s *Shipper) verifyAfter(ctx context.Context, f spool.File, key string) (result, error) {
	after, err := s.st.Head(ctx, key)
	if err != nil {
		return result{}, fmt.Errorf("verifying %s after the put: %w", s.where(key), err)
	}
	same, err := s.same(ctx, f, key, after)
	if err != nil {
		return result{}, err
	}
	if !same {
		return result{}, s.mismatch(f, key, after)
	}
	return result{key: key, etag: after.ETag, outcome: OutcomeOK}, nil
}

// put sends b to key: in one request, or as a multipart upload with part buffers taken from
// the shared budget. A put replacing the object of ETag ifMatch carries If-Match in create
// mode (and nothing in overwrite mode); any other is create-if-absent in create mode.
func (s *Shipper) put(ctx context.Context, f spool.File, key string, b *body, large bool, ifMatch string) (store.ObjectInfo, error) {
	opts := &store.PutOptions{Size: f.Size, ContentType: contentType(f.Ext),
		Metadata: Metadata(s.cfg.Node, f), IfNoneMatch: s.mode == PutCreate && ifMatch == ""}
	if s.mode == PutCreate {
		opts.IfMatch = ifMatch
	}
	// A large file is offered for reading in place (ReadAt: the S3 backend then sends each
	// part straight from the file, with no part buffer); a small one is read in order.
	var r io.Reader = b
	if !large {
		r = inOrder{b}
	}
	if s.opts.Hooks.Body != nil {
		r = s.opts.Hooks.Body(f, r)
	}
	if !large {
		// One request: a part larger than the body keeps every backend from splitting it.
		opts.PartSize, opts.Concurrency = max(f.Size+1, MinPartSize), 1
		return s.st.Put(ctx, key, r, opts)
	}
	held, err := s.parts.acquire(ctx, partsOf(f.Size, s.cfg.PartSize))
	if err != nil {
		return store.ObjectInfo{}, err
	}
	defer s.parts.release(held)
	opts.PartSize, opts.Concurrency = s.cfg.PartSize, held
	return s.st.Put(ctx, key, r, opts)
}

// refused settles a conditional put that failed its condition or lost its answer: one HEAD
// says whether the object is there, and whose it is.
func (s *Shipper) refused(ctx context.Context, f spool.File, key string, putErr error) (result, error) {
	info, err := s.st.Head(ctx, key)
	switch {
	case errors.Is(err, store.ErrNotExist) && errors.Is(putErr, store.ErrOutcomeUnknown):
		return result{}, fmt.Errorf("the put's answer was lost and nothing is at the key: %w", putErr)
	case err != nil:
		return result{}, fmt.Errorf("checking %s after %v: %w", s.where(key), putErr, err)
	}
	var se *store.Error
	if errors.As(putErr, &se) && se.PutID != "" && info.Metadata[store.MetaPutID] == se.PutID {
		// Our own put landed; its answer was lost.
		same, err := s.same(ctx, f, key, info)
		if err != nil {
			return result{}, err
		}
		if !same {
			return result{}, s.mismatch(f, key, info)
		}
		return result{key: key, etag: info.ETag, outcome: OutcomeOK}, nil
	}
	return s.existing(ctx, f, key, info)
}

// existing settles a key that already holds an object: success when it is f's content, the
// file written over it when it is a damaged copy of f (damaged), ErrObjectKeyCollision when it
// is another object.
func (s *Shipper) existing(ctx context.Context, f spool.File, key string, info store.ObjectInfo) (result, error) {
	same, err := s.same(ctx, f, key, info)
	if err != nil {
		return result{}, err
	}
	if !same && damaged(f, info) {
		return s.rewrite(ctx, f, key, info)
	}
	if !same {
		return result{}, s.collision(f, key, info)
	}
	return result{key: key, etag: info.ETag, outcome: OutcomeConflictEqual}, nil
}

// same reports whether the object described by info holds f's content: its size and its
// wharf-sha256. An object of the right size without wharf-sha256 (a file store killed between
// writing an object and its metadata) is read and hashed; when it matches, its metadata is
// written again.
func (s *Shipper) same(ctx context.Context, f spool.File, key string, info store.ObjectInfo) (bool, error) {
	if info.Size != f.Size {
		return false, nil
	}
	if sum := info.Metadata[store.MetaSHA256]; sum != "" {
		return strings.EqualFold(sum, f.SHA256), nil
	}
	sum, err := s.hashObject(ctx, key, info.ETag)
	if err != nil {
		return false, err
	}
	if !strings.EqualFold(sum, f.SHA256) {
		return false, nil
	}
	s.log.Warn("object has the file's content but not its metadata: writing it again", "file_id", f.ID, "key", s.where(key))
	return true, s.repair(ctx, f, key, info.ETag)
}

func (s *Shipper) hashObject(ctx context.Context, key, etag string) (string, error) {
	obj, err := s.st.Get(ctx, key, &store.GetOptions{IfMatch: etag})
	if err != nil {
		return "", fmt.Errorf("reading %s to verify it: %w", s.where(key), err)
	}
	defer obj.Close()
	h := sha256.New()
	if _, err := io.Copy(h, obj); err != nil {
		return "", fmt.Errorf("reading %s to verify it: %w", s.where(key), err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// repair writes f again over an object with the same content but missing metadata: replace
// if the ETag still matches (create mode), or a plain put (overwrite mode).
func (s *Shipper) repair(ctx context.Context, f spool.File, key, etag string) error {
	b, err := openBody(f, s.cfg.PartSize)
	if err != nil {
		return err
	}
	defer b.Close()
	opts := &store.PutOptions{Size: f.Size, ContentType: contentType(f.Ext), Metadata: Metadata(s.cfg.Node, f),
		PartSize: s.cfg.PartSize, Concurrency: 1}
	if s.mode == PutCreate {
		opts.IfMatch = etag
	}
	if f.Size <= s.cfg.MultipartThreshold {
		opts.PartSize = max(f.Size+1, MinPartSize)
	}
	n, err := s.parts.acquire(ctx, 1)
	if err != nil {
		return err
	}
	defer s.parts.release(n)
	if _, err := s.st.Put(ctx, key, inOrder{b}, opts); err != nil {
		return fmt.Errorf("writing the metadata of %s again: %w", s.where(key), err)
	}
	return nil
}

// damaged reports whether the object described by info is a damaged copy of f: it carries f's
// wharf-sha256, sent in the headers of a put of f, but another size, because its body did not
// arrive whole (a proxy or the network dropped part of it). No other writer's object carries
// that sha256 with another size: it is f's own upload, not a collision.
func damaged(f spool.File, info store.ObjectInfo) bool {
	sum := info.Metadata[store.MetaSHA256]
	return sum != "" && strings.EqualFold(sum, f.SHA256) && info.Size != f.Size
}

// mismatch is the error for f's key holding an object that is not f after f was written
// there: ErrUploadTruncated for a damaged copy of f (retried: the next attempt writes it
// again), the fatal collision for another object.
func (s *Shipper) mismatch(f spool.File, key string, info store.ObjectInfo) error {
	if damaged(f, info) {
		return s.truncated(f, key, info)
	}
	return s.collision(f, key, info)
}

// truncated is the error of a damaged copy of f at key, which the next attempt writes over.
func (s *Shipper) truncated(f spool.File, key string, info store.ObjectInfo) error {
	how := "has"
	if info.Size < f.Size {
		how = "holds only"
	}
	return &store.Error{Op: "ship", Key: s.where(key), Kind: ErrUploadTruncated, Err: fmt.Errorf(
		"file %d (%s, %d bytes, sha256 %s) was sent there, but the object %s %d bytes, though it carries the file's wharf-sha256 "+
			"(node %s): the upload's body did not arrive whole (a proxy or the network dropped part of it), this is not another "+
			"spool's or machine's object; the next attempt writes the file over it",
		f.ID, f.Path, f.Size, strings.ToLower(f.SHA256), how, info.Size, orUnknown(info.Metadata[MetaNode]))}
}

// rewrite writes f over old, a damaged copy of f at key (an earlier attempt's upload that did
// not arrive whole): under If-Match on old's ETag in create mode, so that nothing else is ever
// replaced, and as a plain put in overwrite mode; then it verifies the object by HEAD.
func (s *Shipper) rewrite(ctx context.Context, f spool.File, key string, old store.ObjectInfo) (result, error) {
	s.log.Warn("the object at the file's key is a damaged copy of it (its wharf-sha256, another size): writing the file over it",
		"file_id", f.ID, "key", s.where(key), "size", f.Size, "object_size", old.Size, "sha256", f.SHA256)
	large := f.Size > s.cfg.MultipartThreshold
	if large {
		s.abortStale(ctx, key)
	}
	b, err := openBody(f, s.cfg.PartSize)
	if err != nil {
		return result{}, err
	}
	defer b.Close()
	info, err := s.put(ctx, f, key, b, large, old.ETag)
	switch {
	case errors.Is(err, store.ErrPreconditionFailed), errors.Is(err, store.ErrOutcomeUnknown):
		// The object changed since it was read, or the answer was lost: the next attempt
		// looks again.
		return result{}, fmt.Errorf("writing file %d over the damaged copy at %s: %w", f.ID, s.where(key), err)
	case err != nil:
		return result{}, err
	}
	if err := s.sent(ctx, f, key, info, b); err != nil {
		return result{}, err
	}
	return s.verifyAfter(ctx, f, key)
}

// collision is the fatal error for f meeting other content at key.
func (s *Shipper) collision(f spool.File, key string, info store.ObjectInfo) error {
	s.m.collisions.Inc()
	theirs := info.Metadata[store.MetaSHA256]
	if theirs == "" {
		theirs = "not recorded"
	}
	return &store.Error{Op: "ship", Key: s.where(key), Kind: ErrObjectKeyCollision, Err: fmt.Errorf(
		"file %d (%s, %d bytes, sha256 %s) would go there, but the object has %d bytes, sha256 %s "+
			"(node %s): keys are unique per spool epoch (%016x) and node id (%s), so either this spool's epoch "+
			"or this node id is also used by another spool or machine; fix the misconfiguration (a copied "+
			"spool directory, a reused node id) and restart; nothing was overwritten",
		f.ID, f.Path, f.Size, strings.ToLower(f.SHA256), info.Size, theirs, orUnknown(info.Metadata[MetaNode]),
		s.epoch, s.cfg.Node)}
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// changed handles a spooled file whose bytes no longer match the catalog's sha256: the object
// just written holds them, so it is removed (only if it is still ours), and the error is fatal.
func (s *Shipper) changed(ctx context.Context, f spool.File, key string, info store.ObjectInfo, got string) error {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeTimeout)
	defer cancel()
	undo := "removed"
	if err := s.st.Delete(dctx, key, &store.DeleteOptions{IfMatch: info.ETag}); err != nil {
		undo = fmt.Sprintf("could not be removed (%v): remove it by hand", err)
	}
	return errcode.E("ship", f.Path, spool.ErrCorrupt, fmt.Errorf(
		"file %d changed on disk after it was spooled: its sha256 is now %s, the catalog recorded %s; the object written from it at %s %s",
		f.ID, got, strings.ToLower(f.SHA256), s.where(key), undo))
}

// partsOf is how many parts of size part a body of size n needs.
func partsOf(n, part int64) int {
	if part <= 0 {
		return 1
	}
	return int(max((n+part-1)/part, 1))
}

// isFatal reports whether err stops the service: its class is errcode.Fatal (a collision, a
// spool that lost or changed a file, a configuration no retry can fix). Every other class is
// retried: transient failures, a bad item (a source file gone: the service retries each file
// until it ships), and failures that need an operator, which also count toward an unhealthy
// /healthz (needsOperator).
func isFatal(err error) bool { return errcode.ClassOf(err) == errcode.Fatal }

// budget bounds the part buffers of multipart uploads across the service.
type budget chan struct{}

// acquire takes one part buffer, waiting for it, then up to want-1 more that are free.
func (b budget) acquire(ctx context.Context, want int) (int, error) {
	select {
	case b <- struct{}{}:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	n := 1
	for n < want {
		select {
		case b <- struct{}{}:
			n++
		default:
			return n, nil
		}
	}
	return n, nil
}

func (b budget) release(n int) {
	for range n {
		<-b
	}
}
