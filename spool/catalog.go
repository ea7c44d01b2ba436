package spool

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/wharfdata/wharf/internal/flock"
)

// The record types of the catalog.
const (
	recFinalized = "finalized"
	recEligible  = "eligible"
	recUploaded  = "uploaded"
	recDeleted   = "deleted"
)

// record is one line of the catalog. Which fields a record has depends on its type; see the
// package documentation.
type record struct {
	Type    string    `json:"type"`
	ID      uint64    `json:"id"`
	Dataset string    `json:"dataset,omitempty"`
	Path    string    `json:"path,omitempty"`
	Size    *int64    `json:"size,omitempty"`
	SHA256  string    `json:"sha256,omitempty"`
	First   uint64    `json:"first,omitempty"`
	Last    uint64    `json:"last,omitempty"`
	Time    time.Time `json:"time,omitzero"`
	Ext     string    `json:"ext,omitempty"`
	Clock   Clock     `json:"clock,omitempty"`
	Key     string    `json:"key,omitempty"`
	ETag    string    `json:"etag"`
	Outcome string    `json:"outcome,omitempty"`
	At      time.Time `json:"at"`
}

// line encodes r as one catalog line, newline included, with only its type's fields.
func (r *record) line() ([]byte, error) {
	var v any
	switch r.Type {
	case recFinalized:
		v = struct {
			Type    string    `json:"type"`
			ID      uint64    `json:"id"`
			Dataset string    `json:"dataset"`
			Path    string    `json:"path"`
			Size    int64     `json:"size"`
			SHA256  string    `json:"sha256"`
			First   uint64    `json:"first"`
			Last    uint64    `json:"last"`
			Time    time.Time `json:"time"`
			Ext     string    `json:"ext"`
			Clock   Clock     `json:"clock,omitempty"`
			At      time.Time `json:"at"`
		}{r.Type, r.ID, r.Dataset, r.Path, *r.Size, r.SHA256, r.First, r.Last, r.Time, r.Ext, r.Clock, r.At}
	case recUploaded:
		v = struct {
			Type    string    `json:"type"`
			ID      uint64    `json:"id"`
			Key     string    `json:"key"`
			ETag    string    `json:"etag"`
			Outcome string    `json:"outcome"`
			At      time.Time `json:"at"`
		}{r.Type, r.ID, r.Key, r.ETag, r.Outcome, r.At}
	default:
		v = struct {
			Type string    `json:"type"`
			ID   uint64    `json:"id"`
			At   time.Time `json:"at"`
		}{r.Type, r.ID, r.At}
	}
	b, err := json.Marshal(v)
	return append(b, '\n'), err
}

// errSyntax marks a line that is not a JSON object at all, as a torn write leaves it.
var errSyntax = errors.New("not a JSON object")

// decodeRecord parses and checks one line (without its newline). An error wrapping errSyntax
// means the line is not JSON; any other, that it is a record with wrong or missing fields.
func decodeRecord(line []byte) (*record, error) {
	var r record
	if err := json.Unmarshal(line, &r); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) {
			return nil, fmt.Errorf("field %q: %v", ute.Field, err)
		}
		return nil, fmt.Errorf("%w: %v", errSyntax, err)
	}
	if r.ID == 0 {
		return nil, fmt.Errorf("%s record without an id", orQuoted(r.Type))
	}
	if r.At.IsZero() {
		return nil, fmt.Errorf("%s record %d without its time (at)", r.Type, r.ID)
	}
	switch r.Type {
	case recFinalized:
		return &r, checkFinalized(&r)
	case recUploaded:
		if r.Key == "" || r.Outcome == "" {
			return nil, fmt.Errorf("uploaded record %d without its key or outcome", r.ID)
		}
	case recEligible, recDeleted:
	default:
		return nil, fmt.Errorf("unknown record type %s", orQuoted(r.Type))
	}
	return &r, nil
}

func checkFinalized(r *record) error {
	switch {
	case !datasetRE.MatchString(r.Dataset):
		return fmt.Errorf("finalized record %d: dataset %q is not a dataset name", r.ID, r.Dataset)
	case !extRE.MatchString(r.Ext):
		return fmt.Errorf("finalized record %d: extension %q is not valid", r.ID, r.Ext)
	case r.Size == nil || *r.Size < 0:
		return fmt.Errorf("finalized record %d without a size", r.ID)
	case len(r.SHA256) != 64 || !isHex(r.SHA256):
		return fmt.Errorf("finalized record %d: sha256 %q is not 64 hex digits", r.ID, r.SHA256)
	case r.First == 0 || r.Last == 0 || r.Time.IsZero() || r.Path == "":
		return fmt.Errorf("finalized record %d without first, last, time or path", r.ID)
	case r.Clock != ClockUnknown && r.Clock != ClockSynced && r.Clock != ClockUnsynced:
		return fmt.Errorf("finalized record %d: clock %q is not synced or unsynced", r.ID, string(r.Clock))
	}
	return nil
}

// isHex reports whether s is lowercase hex digits.
func isHex(s string) bool {
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func orQuoted(s string) string {
	if s == "" {
		return "(no type)"
	}
	return fmt.Sprintf("%q", s)
}

// torn describes an ignored torn last line of the catalog: an append that a crash interrupted.
type torn struct {
	Line   int    // its line number
	Offset int64  // where it starts
	Bytes  int64  // its length
	Reason string // "no trailing newline" or "not valid JSON"
}

func (t *torn) warning(path string) string {
	return fmt.Sprintf("%s line %d: ignoring a torn last record (%d bytes, %s): an append was interrupted; it is removed before the next append",
		path, t.Line, t.Bytes, t.Reason)
}

// reader replays the catalog into a state, from where it last stopped.
type reader struct {
	path string
	st   *state
	off  int64 // the end of the last record applied
	line int   // the records applied so far (the last one's line number)
	torn *torn // the torn tail seen by the last read, if any
}

// read applies every complete record from r.off to the end of f. A torn last line is left
// unread and described in r.torn; any other bad line is ErrCorrupt naming the path and line.
func (r *reader) read(op string, f *os.File) error {
	r.torn = nil
	if fi, err := f.Stat(); err == nil && fi.Size() == r.off {
		return nil // nothing appended since the last read (the common case of a group commit)
	}
	br := bufio.NewReaderSize(io.NewSectionReader(f, r.off, math.MaxInt64-r.off), 64<<10)
	for {
		b, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			if len(b) > 0 {
				r.torn = &torn{Line: r.line + 1, Offset: r.off, Bytes: int64(len(b)), Reason: "no trailing newline"}
			}
			return nil
		}
		if err != nil {
			return ioErr(op, r.path, err)
		}
		rec, err := decodeRecord(b[:len(b)-1])
		if errors.Is(err, errSyntax) {
			// Not JSON: torn if no complete line follows it, as readTail decides too.
			rest, rerr := io.ReadAll(br)
			if rerr != nil {
				return ioErr(op, r.path, rerr)
			}
			if !bytes.Contains(rest, []byte{'\n'}) {
				r.torn = &torn{Line: r.line + 1, Offset: r.off, Bytes: int64(len(b) + len(rest)), Reason: "not valid JSON"}
				return nil
			}
		}
		if err != nil {
			return lineErr(op, r.path, r.line+1, err)
		}
		if err := r.st.apply(rec); err != nil {
			return lineErr(op, r.path, r.line+1, err)
		}
		r.line++
		r.off += int64(len(b))
	}
}

// tail is what an appender learns from the end of the catalog, under the lock.
type tail struct {
	end  int64   // where the next record goes
	cut  int64   // bytes of a torn last line truncated away (0: none)
	last *record // the last finalized record; nil if there is none
}

// next is the first sequence number of the next file.
func (t tail) next() uint64 {
	if t.last == nil {
		return 1
	}
	return t.last.Last + 1
}

// readTail truncates a torn last line of f away and finds the last finalized record, reading
// backwards from the end. Call it with the catalog lock held.
func readTail(op, path string, f *os.File) (tail, error) {
	fi, err := f.Stat()
	if err != nil {
		return tail{}, ioErr(op, path, err)
	}
	size := fi.Size()
	t := tail{end: size}
	if size > 0 {
		var last [1]byte
		if _, err := f.ReadAt(last[:], size-1); err != nil {
			return tail{}, ioErr(op, path, err)
		}
		if last[0] != '\n' {
			if t.end, _, err = lineBefore(f, size+1); err != nil {
				return tail{}, ioErr(op, path, err)
			}
		}
	}
	if t.end > 0 {
		start, b, err := lineBefore(f, t.end)
		if err != nil {
			return tail{}, ioErr(op, path, err)
		}
		if _, err := decodeRecord(b); errors.Is(err, errSyntax) {
			t.end = start
		}
	}
	if t.cut = size - t.end; t.cut > 0 {
		if err := f.Truncate(t.end); err != nil {
			return tail{}, ioErr(op, path, err)
		}
		if err := f.Sync(); err != nil {
			return tail{}, ioErr(op, path, err)
		}
	}
	for end := t.end; end > 0; {
		start, b, err := lineBefore(f, end)
		if err != nil {
			return tail{}, ioErr(op, path, err)
		}
		rec, err := decodeRecord(b)
		if err != nil {
			return tail{}, newErr(op, path, ErrCorrupt, fmt.Errorf("the record at byte %d: %v (run `wharf spool status` for its line)", start, err))
		}
		if rec.Type == recFinalized {
			t.last = rec
			break
		}
		end = start
	}
	return t, nil
}

// lineBefore returns the line whose newline is at end-1 (without it) and its start offset.
// With end = size+1 on a file not ending in a newline, it finds the start of the last line.
func lineBefore(f *os.File, end int64) (int64, []byte, error) {
	for n := int64(4096); ; n *= 4 {
		from := max(0, end-1-n)
		b := make([]byte, end-1-from)
		if _, err := f.ReadAt(b, from); err != nil && !errors.Is(err, io.EOF) {
			return 0, nil, err
		}
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			return from + int64(i) + 1, b[i+1:], nil
		}
		if from == 0 {
			return 0, b, nil
		}
	}
}

// appendRecord writes rec at the end of f (opened with O_APPEND, the lock held, end its size)
// and fsyncs it. On failure it truncates f back to end, so no partial record stays behind.
func appendRecord(f *os.File, end int64, rec *record) (int64, error) {
	b, err := rec.line()
	if err != nil {
		return end, err
	}
	if testHook != nil { // the crash tests tear a record in two
		half := len(b) / 2
		if _, err := f.Write(b[:half]); err != nil {
			return end, undo(f, end, err)
		}
		at("mid-" + rec.Type)
		_, err = f.Write(b[half:])
	} else {
		_, err = f.Write(b)
	}
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		return end, undo(f, end, err)
	}
	return end + int64(len(b)), nil
}

// undo truncates a failed append away.
func undo(f *os.File, end int64, err error) error {
	if terr := f.Truncate(end); terr != nil {
		return fmt.Errorf("%w (and removing the partial record failed: %v)", err, terr)
	}
	return err
}

// lockWait is the longest pause between attempts to take a busy lock.
const lockWait = 2 * time.Millisecond

// flockCtx takes an flock on f, waiting until it is free or ctx is done.
func flockCtx(ctx context.Context, f *os.File, exclusive bool) error {
	wait := 50 * time.Microsecond
	for {
		busy, err := flock.TryLock(f, exclusive)
		if err != nil || !busy {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		wait = min(wait*2, lockWait)
	}
}
