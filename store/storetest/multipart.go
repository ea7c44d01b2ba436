package storetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"testing"

	"github.com/wharfdata/wharf/internal/crc32c"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/probe"
)

func (su *suite) testMultipart(t *testing.T) {
	if !su.h.Large {
		t.Skipf("%s: Harness.Large is off", su.h.Name)
	}
	t.Run("KnownSize", func(t *testing.T) { su.testLargeRoundTrip(t, true) })
	t.Run("UnknownSize", func(t *testing.T) { su.testLargeRoundTrip(t, false) })
	t.Run("IfNoneMatchPresent", su.testLargeIfNoneMatch)
	t.Run("Cancelled", su.testLargeCancelled)
	t.Run("BodyError", su.testLargeBodyError)
	t.Run("ChecksumMismatch", su.testLargeChecksumMismatch)
}

// testLargeChecksumMismatch: a put in parts whose body is not what its CRC-32C says fails
// with ErrChecksumMismatch, commits nothing and leaves no upload open.
func (su *suite) testLargeChecksumMismatch(t *testing.T) {
	s := su.open(t)
	data := randomBytes(int(su.h.LargeSize), 13)
	wrong := crc32c.Format(crc32c.Sum(data[1:]))
	_, err := s.Put(t.Context(), "large-mismatch", bytes.NewReader(data), &store.PutOptions{
		Size: int64(len(data)), PartSize: su.h.PartSize, Concurrency: 2, CRC32C: wrong})
	if !errors.Is(err, store.ErrChecksumMismatch) {
		t.Fatalf("large put with a CRC-32C its body lacks: %v, want ErrChecksumMismatch", err)
	}
	if _, err := s.Head(t.Context(), "large-mismatch"); !errors.Is(err, store.ErrNotExist) {
		t.Errorf("after the refused large put: head %v, want ErrNotExist", err)
	}
	su.wantNoUploads(t, s, "after a refused large put")
}

func (su *suite) largeOpts(size int64) *store.PutOptions {
	return &store.PutOptions{Size: size, PartSize: su.h.PartSize, Concurrency: 2}
}

// wantNoUploads fails t when the harness can count open multipart uploads and finds any.
func (su *suite) wantNoUploads(t *testing.T, s *store.Store, what string) {
	t.Helper()
	if su.h.OpenUploads == nil {
		return
	}
	if n := su.h.OpenUploads(t, s); n != 0 {
		t.Errorf("%s: %d multipart uploads left open, want none", what, n)
	}
}

// testLargeRoundTrip puts a body of several parts, of known or unknown size, and reads it back
// byte-exact.
func (su *suite) testLargeRoundTrip(t *testing.T, known bool) {
	s := su.open(t)
	data := randomBytes(int(su.h.LargeSize), 11)
	var body io.Reader = bytes.NewReader(data)
	size := int64(len(data))
	if !known {
		body, size = onlyReader{body}, -1
	}
	info, err := s.Put(t.Context(), "large", body, su.largeOpts(size))
	if err != nil {
		t.Fatalf("large put (%d bytes, known size %v): %v", len(data), known, err)
	}
	if info.Size != int64(len(data)) {
		t.Errorf("large put: result Size %d, want %d", info.Size, len(data))
	}
	obj, err := s.Get(t.Context(), "large", nil)
	if err != nil {
		t.Fatalf("get large: %v", err)
	}
	defer obj.Close()
	h := sha256.New()
	n, err := io.Copy(h, obj)
	if err != nil {
		t.Fatalf("reading large: %v", err)
	}
	if want := sha256.Sum256(data); n != int64(len(data)) || !bytes.Equal(h.Sum(nil), want[:]) {
		t.Errorf("large read back: %d bytes sha256 %x, want %d bytes %x", n, h.Sum(nil), len(data), want)
	}
	head := mustHead(t, s, "large")
	if head.Size != int64(len(data)) || head.ETag != info.ETag {
		t.Errorf("head large: Size %d ETag %q, want %d %q", head.Size, head.ETag, len(data), info.ETag)
	}
	su.wantChecksum(t, "large put", head, data)
	su.wantNoUploads(t, s, "after a large put")
}

// testLargeIfNoneMatch: a large create-if-absent onto an existing key fails (the condition is
// kept on the final step) and leaves the object untouched.
func (su *suite) testLargeIfNoneMatch(t *testing.T) {
	s := su.open(t)
	if su.verdict(t, probe.CapConditionalCreate) != probe.Yes {
		t.Skip("the probe says create-if-absent is not enforced")
	}
	old := putBytes(t, s, "large", []byte("small original"), nil)
	data := randomBytes(int(su.h.LargeSize), 12)
	opts := su.largeOpts(int64(len(data)))
	opts.IfNoneMatch = true
	_, err := s.Put(t.Context(), "large", bytes.NewReader(data), opts)
	wantKind(t, err, store.ErrPreconditionFailed, "large create-if-absent onto an existing key")
	if info := wantContent(t, s, "large", []byte("small original"), "failed large create"); info.ETag != old.ETag {
		t.Errorf("failed large create changed the ETag to %q", info.ETag)
	}
	su.wantNoUploads(t, s, "after a failed conditional large put")
}

// midBody is where a large put is broken: after two parts, or halfway through a body of
// fewer than four parts.
func (su *suite) midBody() int64 { return min(2*su.h.PartSize+1, su.h.LargeSize/2) }

// cancelAfter reads from r and cancels the context after n bytes have been read.
type cancelAfter struct {
	r      io.Reader
	n      int64
	cancel context.CancelFunc
}

func (c *cancelAfter) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n -= int64(k)
	if c.n <= 0 {
		c.cancel()
	}
	return k, err
}

// failAfter reads from r and fails with err after n bytes.
type failAfter struct {
	r   io.Reader
	n   int64
	err error
}

func (f *failAfter) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, f.err
	}
	if int64(len(p)) > f.n {
		p = p[:f.n]
	}
	k, err := f.r.Read(p)
	f.n -= int64(k)
	return k, err
}

// testLargeCancelled: a large put whose context is cancelled mid-body returns the context's
// error and leaves nothing at the key and no upload open.
func (su *suite) testLargeCancelled(t *testing.T) {
	s := su.open(t)
	data := randomBytes(int(su.h.LargeSize), 13)
	for _, known := range []bool{true, false} {
		ctx, cancel := context.WithCancel(t.Context())
		body := &cancelAfter{r: bytes.NewReader(data), n: su.midBody(), cancel: cancel}
		size := int64(len(data))
		if !known {
			size = -1
		}
		_, err := s.Put(ctx, "cancelled", body, su.largeOpts(size))
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("large put cancelled mid-body (known size %v): %v, want context.Canceled", known, err)
		}
		wantAbsent(t, s, "cancelled", "after a cancelled large put")
		su.wantNoUploads(t, s, "after a cancelled large put")
	}
}

// testLargeBodyError: a large put whose body fails mid-stream fails with that error (errors.Is)
// and leaves nothing at the key and no upload open.
func (su *suite) testLargeBodyError(t *testing.T) {
	s := su.open(t)
	data := randomBytes(int(su.h.LargeSize), 14)
	boom := errors.New("storetest: body failed mid-stream")
	for _, known := range []bool{true, false} {
		body := &failAfter{r: bytes.NewReader(data), n: su.midBody(), err: boom}
		size := int64(len(data))
		if !known {
			size = -1
		}
		_, err := s.Put(t.Context(), "broken", body, su.largeOpts(size))
		if !errors.Is(err, boom) {
			t.Errorf("large put with a failing body (known size %v): %v, want it to wrap the body's error", known, err)
		}
		wantAbsent(t, s, "broken", "after a large put with a failing body")
		su.wantNoUploads(t, s, "after a large put with a failing body")
	}
}
