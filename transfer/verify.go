package transfer

import (
	"context"
	"fmt"
	"io"

	"github.com/wharfdata/wharf/internal/crc32c"
	"github.com/wharfdata/wharf/store"
)

// A copy out of a store checks the bytes it read against the CRC-32C the object carries
// (store.ObjectInfo.CRC32C: the store's own, or the one wharf's put recorded): a download as
// it writes the file, each range of a parallel download on its own and the whole combined
// from them; a copy into another store by that store's put (PutOptions.CRC32C). A mismatch
// fails the copy with store.ErrChecksumMismatch before anything is renamed into place or
// committed. An object that carries no CRC-32C is copied unverified, and counted so
// (Summary.Unverified).

// sumWriter passes writes to w and computes the CRC-32C of the bytes w took. Each piece (at
// most 64 KiB, copyCtx's writeSize) is hashed right after its write, whose copy into the page
// cache has just read it into this core's cache; hashing each read of up to 320 KiB before
// its writes cost the CRC of a large download about an eighth more CPU (bench/README.md).
type sumWriter struct {
	w   io.Writer
	crc uint32
}

func (s *sumWriter) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	s.crc = crc32c.Update(s.crc, p[:n])
	return n, err
}

// checkSum compares got, the CRC-32C of the n bytes read of src, with want, the one the
// object carries: "" counts the copy unverified.
func (r *runner) checkSum(src string, n int64, got uint32, want string) error {
	if want == "" {
		r.unverified.Add(1)
		return nil
	}
	if g := crc32c.Format(got); g != want {
		return &store.Error{Op: "get", Key: src, Kind: store.ErrChecksumMismatch,
			Err: fmt.Errorf("the %d bytes read have CRC-32C %s, the object carries %s", n, g, want)}
	}
	r.verified.Add(1)
	return nil
}

// headForSum is the size from which a download whose answer carried no CRC-32C asks for it
// with one more request (wantedSum): an object that large was likely sent in parts, and S3
// gives the full-object checksum of one with a Head only. A smaller one wharf wrote carries
// wharf-crc32c, which every read returns.
const headForSum = 8 << 20

// wantedSum returns the CRC-32C object key of the source carries, asking the source once more
// when the answer that opened it (a range) gave none: S3 returns its own checksum with a
// Head only. An answer for another version (etag) than the one read gives none.
func (r *runner) wantedSum(ctx context.Context, key string, info store.ObjectInfo) string {
	if info.CRC32C != "" {
		return info.CRC32C
	}
	h, ok := r.src.(interface {
		Head(context.Context, string) (store.ObjectInfo, error)
	})
	if !ok {
		return ""
	}
	head, err := h.Head(ctx, key)
	if err != nil || head.ETag != info.ETag {
		return ""
	}
	return head.CRC32C
}
