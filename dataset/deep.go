package dataset

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/wharfdata/wharf/store"
)

// A Decoder reads one part of its format whole, as a reader of the format would, for a deep
// Validate: it returns the rows the part holds, adds a problem (PartFile.Problem) for what a
// reader would reject (a schema that is not the manifest's, a string that is not UTF-8), and
// returns an error for a part that does not decode at all (ProblemPartUnreadable).
type Decoder func(ctx context.Context, pf *PartFile) (rows int64, err error)

// PartFile is one part as a Decoder reads it: its bytes, already re-hashed and found to be
// the manifest's.
type PartFile struct {
	Manifest *Manifest
	Part     Part
	File     *os.File // the part's bytes, whole, read from offset 0 (a Parquet reader seeks)
	v        *Validation
}

// Problem adds a problem with the part to the validation.
func (pf *PartFile) Problem(code, format string, a ...any) {
	pf.v.add(code, pf.Part.Key, format, a...)
}

// Text returns the part's bytes as a reader of a text format reads them: a .zst part through
// zstd, a .gz part through gzip (as a backfill's parts are written), anything else as it is.
func (pf *PartFile) Text() (io.ReadCloser, error) {
	switch key := pf.Part.Key; {
	case strings.HasSuffix(key, ".zst"):
		d, err := zstd.NewReader(pf.File, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, err
		}
		return d.IOReadCloser(), nil
	case strings.HasSuffix(key, ".gz"):
		return gzip.NewReader(pf.File)
	}
	return io.NopCloser(pf.File), nil
}

var (
	decodersMu sync.RWMutex
	decoders   = map[Format]Decoder{FormatNDJSON: decodeNDJSON, FormatLines: decodeLines}
)

// RegisterDecoder makes d the Decoder of format f, for every deep Validate in the program.
// NDJSON and lines are this package's own; export registers Parquet's and CSV's (their
// readers stay out of this package). A manifest of a format without its own Decoder is read
// as Parquet, the default format. It panics on a format registered twice or a nil d.
func RegisterDecoder(f Format, d Decoder) {
	decodersMu.Lock()
	defer decodersMu.Unlock()
	if d == nil {
		panic(fmt.Sprintf("dataset: a nil decoder for format %q", f))
	}
	if _, dup := decoders[f]; dup {
		panic(fmt.Sprintf("dataset: format %q registered twice", f))
	}
	decoders[f] = d
}

func decoderFor(f Format) Decoder {
	decodersMu.RLock()
	defer decodersMu.RUnlock()
	if d, ok := decoders[f]; ok {
		return d
	}
	return decoders[FormatParquet]
}

// deepCheck reads a part whole: it re-hashes its bytes and decodes every row as a reader
// would, so that a part a reader rejects is never certified. The part is copied to a temporary
// file on the way (a Parquet reader needs to seek), so memory stays bounded by one batch.
// Problems are added to v; the error is for a part that cannot be read from the store at all.
func (v *Validation) deepCheck(ctx context.Context, s *store.Store, m *Manifest, p Part) error {
	obj, err := s.Get(ctx, p.Key, nil)
	if err != nil {
		return err
	}
	defer obj.Close()
	tmp, err := os.CreateTemp("", "wharf-validate-*")
	if err != nil {
		return fmt.Errorf("reading %s whole needs a temporary file: %w", p.Key, err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(h, tmp), obj); err != nil {
		return err
	}
	if sum := hex.EncodeToString(h.Sum(nil)); sum != p.SHA256 {
		v.add(ProblemPartHash, p.Key, "part's bytes hash to sha256 %s, the manifest records %s", sum, p.SHA256)
		return nil // a changed part: what it decodes to says nothing more
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return err
	}
	decode := decoderFor(m.Format)
	if decode == nil {
		v.add(ProblemPartUnreadable, p.Key, "no decoder of format %q is linked into this program: the part was not read", m.Format)
		return nil
	}
	rows, err := decode(ctx, &PartFile{Manifest: m, Part: p, File: tmp, v: v})
	if err != nil {
		v.add(ProblemPartUnreadable, p.Key, "the part does not decode: %v", err)
		return nil
	}
	if rows != p.Rows {
		v.add(ProblemPartRows, p.Key, "the part holds %d rows, the manifest records %d", rows, p.Rows)
	}
	return nil
}

// decodeNDJSON reads an NDJSON part: one JSON object a line, valid UTF-8.
func decodeNDJSON(_ context.Context, pf *PartFile) (int64, error) {
	text, err := pf.Text()
	if err != nil {
		return 0, err
	}
	defer text.Close()
	br := bufio.NewReaderSize(text, 1<<16)
	var rows int64
	found := false
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			rows++
			if !found && (!utf8.Valid(line) || !json.Valid(line)) {
				pf.Problem(ProblemPartUTF8, "line %d is not valid UTF-8 JSON", rows)
				found = true
			}
		}
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return rows, err
		}
	}
}

// decodeLines reads a lines part: records of any bytes, each ending in '\n'. A last record
// without its newline was cut short.
func decodeLines(_ context.Context, pf *PartFile) (int64, error) {
	text, err := pf.Text()
	if err != nil {
		return 0, err
	}
	defer text.Close()
	buf := make([]byte, 1<<16)
	var rows int64
	last := byte('\n')
	for {
		n, err := text.Read(buf)
		if n > 0 {
			rows += int64(bytes.Count(buf[:n], []byte{'\n'}))
			last = buf[n-1]
		}
		if errors.Is(err, io.EOF) {
			if last != '\n' {
				pf.Problem(ProblemPartUnreadable, "the part's last record has no newline: the part was cut short")
				rows++
			}
			return rows, nil
		}
		if err != nil {
			return rows, err
		}
	}
}
