package load

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/wharfdata/wharf/dataset"
	"github.com/wharfdata/wharf/errcode"
	"github.com/wharfdata/wharf/store"
)

// batchRows is how many rows of a part are decoded at once.
const batchRows = 16 * 1024

// rows is the pgx.CopyFromSource of a run's parts: exactly the manifest's, in its order, each
// read into a temporary file and checked against the manifest's size and sha256 before a row
// of it is decoded.
type rows struct {
	ctx      context.Context
	s        *store.Store
	m        *dataset.Manifest
	cols     []column
	dir      string
	progress func(Progress)

	next  int // the next part to open
	part  dataset.Part
	f     *os.File
	pf    *file.Reader
	rr    pqarrow.RecordReader
	rec   arrow.RecordBatch
	vals  []valueFunc
	row   int   // in rec
	inRec int   // rows in rec
	got   int64 // rows of the part so far
	out   []any

	rows, bytes int64
	done        int
	err         error
}

func (r *rows) Next() bool {
	if r.err != nil {
		return false
	}
	for {
		if r.row+1 < r.inRec {
			r.row++
			return true
		}
		if r.rr != nil && r.rr.Next() {
			r.rec = r.rr.RecordBatch()
			if err := r.bind(); err != nil {
				r.err = err
				return false
			}
			r.row, r.inRec = 0, int(r.rec.NumRows())
			r.got += int64(r.inRec)
			if r.inRec > 0 {
				return true
			}
			continue
		}
		if r.rr != nil {
			if err := r.endPart(); err != nil {
				r.err = err
				return false
			}
		}
		if r.next == len(r.m.Parts) {
			return false
		}
		if err := r.openPart(r.m.Parts[r.next]); err != nil {
			r.err = err
			return false
		}
		r.next++
	}
}

func (r *rows) Values() ([]any, error) {
	for i, v := range r.vals {
		r.out[i] = v(r.row)
	}
	return r.out, nil
}

func (r *rows) Err() error { return r.err }

// bind makes the value functions of the current batch's columns.
func (r *rows) bind() error {
	if int(r.rec.NumCols()) != len(r.cols) {
		return r.partErr(fmt.Errorf("it has %d columns, the manifest %d", r.rec.NumCols(), len(r.cols)))
	}
	r.vals = r.vals[:0]
	for i, c := range r.cols {
		if name := r.rec.ColumnName(i); name != c.name {
			return r.partErr(fmt.Errorf("its column %d is %q, the manifest's %q", i+1, name, c.name))
		}
		v, err := valuesOf(r.rec.Column(i), c.arrow)
		if err != nil {
			return r.partErr(fmt.Errorf("column %q: %w", c.name, err))
		}
		r.vals = append(r.vals, v)
	}
	if r.out == nil {
		r.out = make([]any, len(r.cols))
	}
	return nil
}

// openPart reads part p into a temporary file, checks its size and sha256, and opens its rows.
func (r *rows) openPart(p dataset.Part) error {
	r.part, r.got, r.row, r.inRec = p, 0, 0, 0
	obj, err := r.s.Get(r.ctx, p.Key, nil)
	if err != nil {
		return err
	}
	defer obj.Close()
	if r.f, err = os.CreateTemp(r.dir, "wharf-load-*.parquet"); err != nil {
		return fmt.Errorf("load: a temporary file for part %s: %w", p.Key, err)
	}
	if err := os.Remove(r.f.Name()); err != nil { // gone when closed, or when the process dies
		return fmt.Errorf("load: %w", err)
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(r.f, h), obj)
	if err != nil {
		return fmt.Errorf("load: reading part %s: %w", p.Key, err)
	}
	if sum := hex.EncodeToString(h.Sum(nil)); n != p.Size || sum != p.SHA256 {
		return r.partErr(fmt.Errorf("it is %d bytes of sha256 %s, the manifest lists %d bytes of %s: it changed since it was certified", n, sum, p.Size, p.SHA256))
	}
	if r.pf, err = file.NewParquetReader(r.f); err != nil {
		return r.partErr(err)
	}
	fr, err := pqarrow.NewFileReader(r.pf, pqarrow.ArrowReadProperties{BatchSize: batchRows}, memory.DefaultAllocator)
	if err != nil {
		return r.partErr(err)
	}
	if r.rr, err = fr.GetRecordReader(r.ctx, nil, nil); err != nil {
		return r.partErr(err)
	}
	r.bytes += n
	return nil
}

// endPart checks the part's row count and closes it.
func (r *rows) endPart() error {
	err := r.rr.Err()
	if errors.Is(err, io.EOF) {
		err = nil
	}
	r.closePart()
	switch {
	case err != nil:
		return r.partErr(err)
	case r.got != r.part.Rows:
		return r.partErr(fmt.Errorf("it holds %d rows, the manifest lists %d", r.got, r.part.Rows))
	}
	r.rows += r.got
	r.done++
	if r.progress != nil {
		r.progress(Progress{Parts: len(r.m.Parts), PartsDone: r.done, Rows: r.rows, Bytes: r.bytes})
	}
	return nil
}

func (r *rows) closePart() {
	if r.rr != nil {
		r.rr.Release()
		r.rr = nil
	}
	if r.pf != nil {
		r.pf.Close()
		r.pf = nil
	}
	if r.f != nil {
		r.f.Close()
		r.f = nil
	}
	r.rec, r.inRec, r.row = nil, 0, 0
}

func (r *rows) partErr(err error) error {
	return errcode.E("load", r.part.Key, ErrRefused, fmt.Errorf("part %s: %w", r.part.Key, err))
}
