package backfill

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// Batch is a run of records of one member of a split, in order. Data holds the records, each
// followed by '\n' (blank lines dropped, a '\r' before the '\n' removed, a last line without
// '\n' given one); record i is Data[start:Ends[i]] where start is Ends[i-1]+1 (0 for the
// first). End is the split's watermark once these records are acknowledged.
type Batch struct {
	Split  string
	Member int
	Key    string
	First  int64 // the member's record index of the first record
	Data   []byte
	Ends   []int
	End    Watermark
}

// Len is the number of records.
func (b *Batch) Len() int { return len(b.Ends) }

// Record returns record i without its '\n'.
func (b *Batch) Record(i int) []byte {
	start := 0
	if i > 0 {
		start = b.Ends[i-1] + 1
	}
	return b.Data[start:b.Ends[i]]
}

// Offset is record i's offset: Offset(member, record index).
func (b *Batch) Offset(i int) int64 { return Offset(b.Member, b.First+int64(i)) }

// errTooLong is the corruption of a record over max_record_bytes.
var errTooLong = errors.New("record longer than max_record_bytes")

// batchBytes is the size at which a batch is handed on.
const batchBytes = 512 << 10

// framer cuts a member's decompressed bytes into NDJSON records.
type framer struct {
	r      io.Reader
	max    int
	buf    []byte // read buffer: buf[start:end] is unread
	start  int
	end    int
	eof    bool
	pos    int64 // decompressed bytes consumed (through the last whole line)
	record int64 // records seen (including skipped ones)
}

func newFramer(r io.Reader, maxRecord int64) *framer {
	return &framer{r: r, max: int(maxRecord), buf: make([]byte, max(256<<10, 2*int(min(maxRecord, 1<<20))))}
}

// line returns the next record (without '\n' or '\r') and whether there is one. Blank lines
// are consumed and skipped.
func (f *framer) line() ([]byte, bool, error) {
	for {
		if i := bytes.IndexByte(f.buf[f.start:f.end], '\n'); i >= 0 {
			l := f.buf[f.start : f.start+i]
			f.start += i + 1
			f.pos += int64(i + 1)
			l = bytes.TrimSuffix(l, []byte{'\r'})
			if len(l) > f.max {
				return nil, false, fmt.Errorf("record %d at byte %d: %w (%d bytes, the limit is %d)", f.record, f.pos-int64(i+1), errTooLong, len(l), f.max)
			}
			if len(l) == 0 {
				continue
			}
			f.record++
			return l, true, nil
		}
		if f.end-f.start > f.max+1 {
			return nil, false, fmt.Errorf("record %d at byte %d: %w (more than %d bytes without a newline)", f.record, f.pos, errTooLong, f.max)
		}
		if f.eof {
			return f.tail()
		}
		if err := f.fill(); err != nil {
			return nil, false, err
		}
	}
}

// tail returns a last line that has no '\n'.
func (f *framer) tail() ([]byte, bool, error) {
	l := bytes.TrimSuffix(f.buf[f.start:f.end], []byte{'\r'})
	f.pos += int64(f.end - f.start)
	f.start = f.end
	if len(l) == 0 {
		return nil, false, nil
	}
	f.record++
	return l, true, nil
}

// fill reads more, moving the unread bytes to the front and growing the buffer when a line
// needs it.
func (f *framer) fill() error {
	if f.start > 0 {
		n := copy(f.buf, f.buf[f.start:f.end])
		f.start, f.end = 0, n
	}
	if f.end == len(f.buf) {
		nb := make([]byte, min(2*len(f.buf), f.max+2))
		copy(nb, f.buf[:f.end])
		f.buf = nb
	}
	n, err := f.r.Read(f.buf[f.end:])
	f.end += n
	if err == io.EOF {
		f.eof = true
		return nil
	}
	return err
}
