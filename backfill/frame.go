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

	pool *bufPool // where Data goes back to once a sink of this package is done with it
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

// recycle gives the batch's buffer back for reuse; the batch must not be used after.
func (b *Batch) recycle() {
	if b.pool != nil {
		b.pool.put(b.Data)
		b.pool.putEnds(b.Ends)
		b.pool, b.Data, b.Ends = nil, nil, nil
	}
}

// errTooLong is the corruption of a record over max_record_bytes.
var errTooLong = errors.New("record longer than max_record_bytes")

// batchBytes is the size of a batch's buffer: a batch is handed on when it is full (or its
// member ends).
const batchBytes = 512 << 10

// framer cuts a member's decompressed bytes into NDJSON records without copying them: the
// decoder reads straight into a batch's buffer, and the records stay where they landed. Bytes
// that are not part of a record (blank lines, a '\r' before '\n', records skipped on resume)
// are squeezed out by moving what follows them within the buffer. A record cut by the end of
// the buffer moves to the next batch's buffer (the one copy a record can take); a record
// longer than a buffer grows it, up to max_record_bytes.
type framer struct {
	rd   io.Reader
	max  int
	pool *bufPool
	size int // a fresh buffer's size

	buf  []byte // buf[:w] are framed records, each ending '\n'; buf[r:n] is unread
	w    int
	r    int
	n    int
	ends []int
	eof  bool

	pos    int64 // decompressed bytes consumed, through the last whole line
	record int64 // records seen, skipped ones included
	// after is where the last framed record ends: its record count and position.
	afterRecord int64
	afterPos    int64
	// skip drops the first skip.Record records (delivered before), which must end at byte
	// skip.Offset.
	skip Watermark
}

func newFramer(rd io.Reader, maxRecord int64, pool *bufPool, skip Watermark) *framer {
	f := &framer{rd: rd, max: int(maxRecord), pool: pool, size: batchBytes, skip: skip,
		afterRecord: skip.Record, afterPos: skip.Offset}
	f.buf, f.ends = pool.get(f.size), pool.getEnds()
	return f
}

// errDrift is a resumed member whose delivered records do not end where the watermark says.
type errDrift struct{ at int64 }

func (e errDrift) Error() string { return fmt.Sprintf("drift at byte %d", e.at) }

// fill reads and frames until the buffer is full of records, or the member ends (done).
// Either way the framed records are then taken with cut.
func (f *framer) fill() (done bool, err error) {
	for {
		if f.n == len(f.buf) {
			if f.w > 0 {
				return false, nil
			}
			if err := f.makeRoom(); err != nil {
				return false, err
			}
		}
		if f.eof { // the buffer has room for the last line's '\n'
			if err := f.tail(); err != nil {
				return false, err
			}
			if f.record < f.skip.Record {
				return false, errDrift{f.pos}
			}
			return true, nil
		}
		k, err := f.rd.Read(f.buf[f.n:])
		f.n += k
		if err == io.EOF {
			f.eof = true
		} else if err != nil {
			return false, err
		}
		if err := f.scan(); err != nil {
			return false, err
		}
	}
}

// scan frames every whole line of buf[r:n].
func (f *framer) scan() error {
	for {
		i := bytes.IndexByte(f.buf[f.r:f.n], '\n')
		if i < 0 {
			if f.n-f.r > f.max+1 {
				return fmt.Errorf("record %d at byte %d: %w (more than %d bytes without a newline)", f.record, f.pos, errTooLong, f.max)
			}
			return nil
		}
		l := i
		if l > 0 && f.buf[f.r+l-1] == '\r' {
			l--
		}
		f.pos += int64(i + 1)
		if l > f.max {
			return fmt.Errorf("record %d at byte %d: %w (%d bytes, the limit is %d)", f.record, f.pos-int64(i+1), errTooLong, l, f.max)
		}
		if err := f.take(l, i+1); err != nil {
			return err
		}
	}
}

// take frames the line of l bytes at buf[r:], which with its line end takes next bytes.
func (f *framer) take(l, next int) error {
	start := f.r
	f.r += next
	if l == 0 {
		return nil // a blank line
	}
	f.record++
	if f.record <= f.skip.Record {
		if f.record == f.skip.Record && f.pos != f.skip.Offset {
			return errDrift{f.pos}
		}
		return nil
	}
	if f.w != start {
		copy(f.buf[f.w:], f.buf[start:start+l])
	}
	f.w += l
	f.buf[f.w] = '\n'
	f.ends = append(f.ends, f.w)
	f.w++
	f.afterRecord, f.afterPos = f.record, f.pos
	return nil
}

// tail frames a last line that has no '\n' (the buffer has room for one).
func (f *framer) tail() error {
	if f.r == f.n {
		return nil
	}
	if f.n-f.r > f.max+1 {
		return fmt.Errorf("record %d at byte %d: %w (more than %d bytes without a newline)", f.record, f.pos, errTooLong, f.max)
	}
	l := f.n - f.r
	f.pos += int64(l)
	if f.buf[f.n-1] == '\r' {
		l--
	}
	return f.take(l, f.n-f.r)
}

// makeRoom frees space in a full buffer that holds no framed record: bytes already passed
// over are dropped, else the buffer grows (an unfinished record longer than it).
func (f *framer) makeRoom() error {
	if f.r > 0 {
		f.n = copy(f.buf, f.buf[f.r:f.n])
		f.r = 0
		return nil
	}
	nb := f.pool.get(min(2*len(f.buf), f.max+2))
	if len(nb) <= len(f.buf) {
		f.pool.put(nb)
		return fmt.Errorf("record %d at byte %d: %w (more than %d bytes without a newline)", f.record, f.pos, errTooLong, f.max)
	}
	copy(nb, f.buf[:f.n])
	f.pool.put(f.buf)
	f.buf = nb
	return nil
}

// cut hands over the framed records as b's Data and Ends. Unless the member is done, a fresh
// buffer starts with what is left unread.
func (f *framer) cut(b *Batch, done bool) {
	b.Data, b.Ends, b.pool = f.buf[:f.w], f.ends, f.pool
	if done {
		f.buf, f.ends = nil, nil
		return
	}
	nb := f.pool.get(max(f.size, f.n-f.r))
	f.n = copy(nb, f.buf[f.r:f.n])
	f.buf, f.w, f.r, f.ends = nb, 0, 0, f.pool.getEnds()
}

// release gives the current buffer back (after a failure).
func (f *framer) release() {
	f.pool.put(f.buf)
	f.pool.putEnds(f.ends)
	f.buf, f.ends = nil, nil
}
