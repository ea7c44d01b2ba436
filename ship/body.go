package ship

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"sync"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/spool"
)

// body is a spooled file opened for upload. The service must know, after the put, that the
// bytes it sent are the bytes whose sha256 the spool recorded (a producer may write to a file
// after spooling it). Two ways:
//
//   - read in order (Read, as single puts and the backends that buffer parts read it): the
//     bytes are hashed as they are read; a seek back to the start (the store's retry, the SDK
//     measuring the body) restarts the hash. complete and sum give the result.
//   - read in place (ReadAt, as the S3 backend reads each part of a multipart upload, in
//     parallel, straight from the file, with no part buffers): each part's bytes, read in
//     order from the part's start, get a CRC-32C, a resend starting it again. After the put,
//     verifyInPlace reads the file once more, in order, for its sha256 and each part's
//     CRC-32C: equal CRCs mean the bytes sent are the bytes hashed.
type body struct {
	f      *os.File
	h      hash.Hash
	pos    int64 // the file offset
	hashed int64 // bytes hashed, from the start; valid while hashed == pos
	size   int64

	partSize int64
	mu       sync.Mutex
	parts    []partRead // by part number - 1; nil until ReadAt is first called
}

// partRead follows the reads of one part.
type partRead struct {
	next   int64  // the offset the next in-order read starts at
	crc    uint32 // of the part's bytes read in order from its start
	broken bool   // a read out of order since the part's start was last read
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// openBody opens f for upload, in parts of partSize when read in place. A missing file, or
// one whose size is not the recorded one, is spool.ErrCorrupt naming the path: the spool lost
// a file it had not shipped.
func openBody(f spool.File, partSize int64) (*body, error) {
	fh, err := openFile(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errcode.E("ship", f.Path, spool.ErrCorrupt, fmt.Errorf("file %d is waiting to be uploaded but is missing from the spool", f.ID))
	}
	if err != nil {
		return nil, fmt.Errorf("opening spooled file %s: %w", f.Path, err)
	}
	fi, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, fmt.Errorf("opening spooled file %s: %w", f.Path, err)
	}
	if fi.Size() != f.Size {
		fh.Close()
		return nil, errcode.E("ship", f.Path, spool.ErrCorrupt, fmt.Errorf("file %d has %d bytes, the catalog recorded %d", f.ID, fi.Size(), f.Size))
	}
	return &body{f: fh, h: sha256.New(), size: f.Size, partSize: max(partSize, 1)}, nil
}

// Read reads at the body's own offset (pread: the SDK seeks a body several times per request,
// and a seek of its own costs no system call).
func (b *body) Read(p []byte) (int, error) {
	if b.pos >= b.size {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), b.size-b.pos)]
	n, err := b.f.ReadAt(p, b.pos)
	if err == io.EOF && n > 0 {
		err = nil
	}
	if b.hashed == b.pos {
		b.h.Write(p[:n])
		b.hashed += int64(n)
	}
	b.pos += int64(n)
	return n, err
}

// Seek moves the body's offset; back at the start, the hash starts again.
func (b *body) Seek(offset int64, whence int) (int64, error) {
	pos := offset
	switch whence {
	case io.SeekCurrent:
		pos += b.pos
	case io.SeekEnd:
		pos += b.size
	case io.SeekStart:
	default:
		return b.pos, fmt.Errorf("seeking %s: whence %d", b.f.Name(), whence)
	}
	if pos < 0 {
		return b.pos, fmt.Errorf("seeking %s: negative offset %d", b.f.Name(), pos)
	}
	b.pos = pos
	if pos == 0 {
		b.h.Reset()
		b.hashed = 0
	}
	return pos, nil
}

// ReadAt reads the file in place and follows each part's reads (see body).
func (b *body) ReadAt(p []byte, off int64) (int, error) {
	n, err := b.f.ReadAt(p, off)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.parts == nil {
		b.parts = make([]partRead, partsOf(b.size, b.partSize))
	}
	k := off / b.partSize
	if k >= int64(len(b.parts)) || off+int64(n) > min((k+1)*b.partSize, b.size) {
		if k < int64(len(b.parts)) {
			b.parts[k].broken = true
		}
		return n, err
	}
	pr := &b.parts[k]
	switch {
	case off == k*b.partSize:
		*pr = partRead{next: off + int64(n), crc: crc32.Update(0, castagnoli, p[:n])}
	case off == pr.next:
		pr.crc = crc32.Update(pr.crc, castagnoli, p[:n])
		pr.next += int64(n)
	default:
		pr.broken = true
	}
	return n, err
}

// inPlace reports whether the body was read in place (ReadAt) at all.
func (b *body) inPlace() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.parts != nil
}

// complete reports whether the whole file was read, in order, since the last rewind.
func (b *body) complete() bool { return b.hashed == b.size && b.pos == b.size }

// sum is the hex sha256 of what was read.
func (b *body) sum() string { return hex.EncodeToString(b.h.Sum(nil)) }

// errUnverified: the parts were not each read whole and in order, so the bytes sent cannot be
// compared with the file's (the caller reads the object back instead).
var errUnverified = errors.New("the parts were not each read whole and in order")

// verifyInPlace reads the file in order, for its sha256 and each part's CRC-32C, and compares
// the CRCs with those of the bytes sent. It returns the sha256 (which the caller compares with
// the spool's record), changed set when a part's bytes differ from what was sent, or
// errUnverified.
func (b *body) verifyInPlace() (sum string, changed bool, err error) {
	b.mu.Lock()
	parts := append([]partRead(nil), b.parts...)
	b.mu.Unlock()
	h := sha256.New()
	buf := make([]byte, 256<<10)
	for k, pr := range parts {
		start := int64(k) * b.partSize
		end := min(start+b.partSize, b.size)
		if pr.broken || pr.next != end {
			return "", false, errUnverified
		}
		crc := uint32(0)
		for off := start; off < end; {
			n, err := b.f.ReadAt(buf[:min(int64(len(buf)), end-off)], off)
			if n == 0 && err != nil {
				return "", false, fmt.Errorf("reading %s again to verify it: %w", b.f.Name(), err)
			}
			h.Write(buf[:n])
			crc = crc32.Update(crc, castagnoli, buf[:n])
			off += int64(n)
		}
		if crc != pr.crc {
			changed = true
		}
	}
	return hex.EncodeToString(h.Sum(nil)), changed, nil
}

func (b *body) Close() error { return b.f.Close() }

// inOrder is a body without ReadAt, for puts that must read it in order (a single put: its
// one request reads it from the start, hashing as it goes).
type inOrder struct{ b *body }

func (r inOrder) Read(p []byte) (int, error)                   { return r.b.Read(p) }
func (r inOrder) Seek(offset int64, whence int) (int64, error) { return r.b.Seek(offset, whence) }

var _ io.ReadSeeker = inOrder{}
