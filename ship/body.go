package ship

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"os"

	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/spool"
)

// body is a spooled file opened for upload: it hashes what is read, so the service knows
// after the put that the bytes it sent are the bytes the spool recorded. The hash follows
// reads made in order from the start; a seek back to the start (the store's retry, the SDK
// measuring the body) restarts it.
type body struct {
	f      *os.File
	h      hash.Hash
	pos    int64 // the file offset
	hashed int64 // bytes hashed, from the start; valid while hashed == pos
	size   int64
}

// openBody opens f for upload. A missing file, or one whose size is not the recorded one, is
// spool.ErrCorrupt naming the path: the spool lost a file it had not shipped.
func openBody(f spool.File) (*body, error) {
	fh, err := os.Open(f.Path)
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
	return &body{f: fh, h: sha256.New(), size: f.Size}, nil
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.f.Read(p)
	if b.hashed == b.pos {
		b.h.Write(p[:n])
		b.hashed += int64(n)
	}
	b.pos += int64(n)
	return n, err
}

// Seek moves in the file; back at the start, the hash starts again.
func (b *body) Seek(offset int64, whence int) (int64, error) {
	pos, err := b.f.Seek(offset, whence)
	if err != nil {
		return b.pos, err
	}
	b.pos = pos
	if pos == 0 {
		b.h.Reset()
		b.hashed = 0
	}
	return pos, nil
}

// complete reports whether the whole file was read, in order, since the last rewind.
func (b *body) complete() bool { return b.hashed == b.size && b.pos == b.size }

// sum is the hex sha256 of what was read.
func (b *body) sum() string { return hex.EncodeToString(b.h.Sum(nil)) }

func (b *body) Close() error { return b.f.Close() }
