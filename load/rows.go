package load

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

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

// rows streams a run's parts in PostgreSQL's binary COPY format: exactly the manifest's, in its
// order, each read into a temporary file and checked against the manifest's size and sha256
// before a row of it is decoded.
type rows struct {
	ctx      context.Context
	s        *store.Store
	m        *dataset.Manifest
	cols     []column
	dir      string
	progress func(Progress)

	part dataset.Part
	f    *os.File
	pf   *file.Reader
	rr   pqarrow.RecordReader
	got  int64 // rows of the part so far

	rows, bytes int64
	done        int
}

// flushAt is the size at which the encoded rows are handed to the connection.
const flushAt = 1 << 20

// stream writes every row of every part to w, between the format's header and trailer.
func (r *rows) stream(w io.Writer) error {
	buf := append(make([]byte, 0, flushAt+64<<10), copyHeader...)
	enc := make([]fieldFunc, len(r.cols))
	for _, p := range r.m.Parts {
		if r.m.Format == dataset.FormatLines {
			var err error
			if buf, err = r.records(w, p, buf); err != nil {
				return err
			}
			continue
		}
		if err := r.openPart(p); err != nil {
			return err
		}
		for r.rr.Next() {
			rec := r.rr.RecordBatch()
			if err := r.bind(rec, enc); err != nil {
				return err
			}
			n := int(rec.NumRows())
			for i := range n {
				buf = binary.BigEndian.AppendUint16(buf, uint16(len(enc)))
				for _, e := range enc {
					buf = e(buf, i)
				}
				if len(buf) >= flushAt {
					if _, err := w.Write(buf); err != nil {
						return err
					}
					buf = buf[:0]
				}
			}
			r.got += int64(n)
		}
		if err := r.endPart(); err != nil {
			return err
		}
	}
	_, err := w.Write(append(buf, copyTrailer...))
	return err
}

// records streams part p of a dataset of records: each line (without its newline) one row of
// one jsonb field. It returns buf with what is still to be written.
func (r *rows) records(w io.Writer, p dataset.Part, buf []byte) ([]byte, error) {
	f, err := r.fetch(p)
	if err != nil {
		return buf, err
	}
	text, err := (&dataset.PartFile{Manifest: r.m, Part: p, File: f}).Text()
	if err != nil {
		return buf, r.partErr(err)
	}
	defer text.Close()
	br := bufio.NewReaderSize(text, 1<<16)
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) { // a record longer than the buffer
			var more []byte
			more, err = br.ReadBytes('\n')
			line = append(slices.Clone(line), more...)
		}
		if len(line) > 0 {
			rec := bytes.TrimSuffix(line, []byte{'\n'})
			buf = binary.BigEndian.AppendUint16(buf, 1)
			buf = append(append(appendLen(buf, len(rec)+1), 1), rec...)
			r.got++
			if len(buf) >= flushAt {
				if _, werr := w.Write(buf); werr != nil {
					return buf, werr
				}
				buf = buf[:0]
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return buf, r.partErr(err)
		}
	}
	return buf, r.endPart()
}

// bind makes the encoders of a batch's columns.
func (r *rows) bind(rec arrow.RecordBatch, enc []fieldFunc) error {
	if int(rec.NumCols()) != len(r.cols) {
		return r.partErr(fmt.Errorf("it has %d columns, the manifest %d", rec.NumCols(), len(r.cols)))
	}
	for i, c := range r.cols {
		if name := rec.ColumnName(i); name != c.name {
			return r.partErr(fmt.Errorf("its column %d is %q, the manifest's %q", i+1, name, c.name))
		}
		e, err := encoderOf(rec.Column(i), c.arrow)
		if err != nil {
			return r.partErr(fmt.Errorf("column %q: %w", c.name, err))
		}
		enc[i] = e
	}
	return nil
}

// fetch reads part p into a temporary file (removed at once: gone when it is closed, or when
// the process dies) and checks its size and sha256 against the manifest's.
func (r *rows) fetch(p dataset.Part) (*os.File, error) {
	r.part, r.got = p, 0
	obj, err := r.s.Get(r.ctx, p.Key, nil)
	if err != nil {
		return nil, err
	}
	defer obj.Close()
	if r.f, err = os.CreateTemp(r.dir, "wharf-load-*"); err != nil {
		return nil, fmt.Errorf("load: a temporary file for part %s: %w", p.Key, err)
	}
	if err := os.Remove(r.f.Name()); err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(r.f, h), obj)
	if err != nil {
		return nil, fmt.Errorf("load: reading part %s: %w", p.Key, err)
	}
	if sum := hex.EncodeToString(h.Sum(nil)); n != p.Size || sum != p.SHA256 {
		return nil, r.partErr(fmt.Errorf("it is %d bytes of sha256 %s, the manifest lists %d bytes of %s: it changed since it was certified", n, sum, p.Size, p.SHA256))
	}
	if _, err := r.f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	r.bytes += n
	return r.f, nil
}

// openPart fetches Parquet part p and opens its rows.
func (r *rows) openPart(p dataset.Part) error {
	f, err := r.fetch(p)
	if err != nil {
		return err
	}
	if r.pf, err = file.NewParquetReader(f); err != nil {
		return r.partErr(err)
	}
	fr, err := pqarrow.NewFileReader(r.pf, pqarrow.ArrowReadProperties{BatchSize: batchRows}, memory.DefaultAllocator)
	if err != nil {
		return r.partErr(err)
	}
	if r.rr, err = fr.GetRecordReader(r.ctx, nil, nil); err != nil {
		return r.partErr(err)
	}
	return nil
}

// endPart checks the part's row count and closes it.
func (r *rows) endPart() error {
	var err error
	if r.rr != nil {
		if err = r.rr.Err(); errors.Is(err, io.EOF) {
			err = nil
		}
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
}

func (r *rows) partErr(err error) error {
	return errcode.E("load", r.part.Key, ErrRefused, fmt.Errorf("part %s: %w", r.part.Key, err))
}
