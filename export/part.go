package export

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/metadata"

	"github.com/wharfdata/wharf/store"
)

// partKey is the deterministic key of chunk idx of run runID: a resume of the run rewrites the
// same key, and a later run's parts land beside it, never over it.
func partKey(runID string, idx int, f Format) string {
	return fmt.Sprintf("part-%s-%05d%s", runID, idx, f.Ext())
}

// hashCounter hashes and counts what passes through to w.
type hashCounter struct {
	w io.Writer
	h hash.Hash
	n int64
}

func (hc *hashCounter) Write(p []byte) (int, error) {
	n, err := hc.w.Write(p)
	hc.h.Write(p[:n])
	hc.n += int64(n)
	return n, err
}

// writePart streams one chunk to key: produce writes record batches through the format
// writer while the store reads the other end of a pipe, so only a bounded amount of the part
// is in memory. The sha256 and size are computed on the way; the store's ETag is recorded.
// A Parquet part's footer is returned too (nil for the other formats), for an Iceberg
// commit that then reads nothing of the part.
func writePart(ctx context.Context, s *store.Store, key string, f Format, schema *arrow.Schema,
	produce func(emit func(arrow.RecordBatch) error) (int64, error)) (Part, *metadata.FileMetaData, error) {
	pr, pw := io.Pipe()
	type result struct {
		info store.ObjectInfo
		err  error
	}
	done := make(chan result, 1)
	go func() {
		info, err := s.Put(ctx, key, pr, &store.PutOptions{Size: -1, ContentType: contentType(f)})
		pr.CloseWithError(err) // unblocks the producer if the store stopped reading
		done <- result{info, err}
	}()
	hc := &hashCounter{w: pw, h: sha256.New()}
	rows, footer, err := produceInto(f, schema, hc, produce)
	pw.CloseWithError(err)
	res := <-done
	switch {
	case err != nil && res.err != nil && errors.Is(err, res.err):
		// The store failed first (a full disk, a lost connection); the writer saw its error.
		return Part{}, nil, newErr("write", key, ErrWrite, explainDiskFull(res.err, s, key))
	case err != nil && (res.err == nil || errors.Is(res.err, err)):
		return Part{}, nil, err // the source or the format failed; the put saw its error
	case res.err != nil:
		return Part{}, nil, newErr("write", key, ErrWrite, explainDiskFull(res.err, s, key))
	}
	if res.info.Size != 0 && res.info.Size != hc.n {
		return Part{}, nil, newErr("write", key, ErrWrite, fmt.Errorf("store recorded %d bytes, wrote %d", res.info.Size, hc.n))
	}
	return Part{Key: key, Rows: rows, Size: hc.n, SHA256: hex.EncodeToString(hc.h.Sum(nil)), ETag: res.info.ETag}, footer, nil
}

func produceInto(f Format, schema *arrow.Schema, w io.Writer,
	produce func(emit func(arrow.RecordBatch) error) (int64, error)) (int64, *metadata.FileMetaData, error) {
	pwr, err := newPartWriter(f, schema, w)
	if err != nil {
		return 0, nil, newErr("write", "format "+string(f), ErrWrite, err)
	}
	rows, err := produce(pwr.Write)
	if cerr := pwr.Close(); err == nil && cerr != nil {
		err = newErr("write", "format "+string(f), ErrWrite, cerr)
	}
	var footer *metadata.FileMetaData
	if pw, ok := pwr.(*parquetWriter); ok && err == nil {
		footer, _ = pw.fw.FileMetadata() // none only costs the commit a read of the footer
	}
	return rows, footer, err
}
