package spool

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"
)

// State is where a file is in its life in the spool. Each is entered by a catalog record of
// the same name.
type State int

// The states, in the only order a file goes through them.
const (
	Finalized State = iota + 1 // durable in ready/ and recorded; not yet eligible
	Eligible                   // waiting to be uploaded (pending)
	Uploaded                   // uploaded and recorded; still in ready/ (retained)
	Deleted                    // removed from ready/ by local retention after its upload
)

// States lists every state, in order.
var States = []State{Finalized, Eligible, Uploaded, Deleted}

var stateNames = map[State]string{Finalized: "finalized", Eligible: "eligible", Uploaded: "uploaded", Deleted: "deleted"}

func (s State) String() string {
	if n, ok := stateNames[s]; ok {
		return n
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// MarshalText writes the state's name.
func (s State) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a state's name.
func (s *State) UnmarshalText(b []byte) error {
	for st, n := range stateNames {
		if n == string(b) {
			*s = st
			return nil
		}
	}
	return fmt.Errorf("unknown spool state %q", b)
}

// File is a file in the spool, as the catalog records it.
type File struct {
	ID      uint64    `json:"id"`      // = First
	Dataset string    `json:"dataset"` // [a-z0-9_-], 1–64 characters
	Path    string    `json:"path"`    // absolute path of the file in ready/
	Name    string    `json:"name"`    // the same, relative to the spool: ready/<dataset>/<first>_<last>.<ext>
	Size    int64     `json:"size"`
	SHA256  string    `json:"sha256"` // hex
	First   uint64    `json:"first"`  // the file's first sequence number
	Last    uint64    `json:"last"`   // its last: Last-First+1 records
	Time    time.Time `json:"time"`   // event time (UTC): the date=/hour= partition
	Ext     string    `json:"ext"`
	// Clock says whether the clock was synchronized when the file was added (ClockUnknown
	// for records from before wharf recorded it): ship keys an unsynced file under unsynced/.
	Clock      Clock     `json:"clock,omitempty"`
	State      State     `json:"state"`
	Added      time.Time `json:"added"`         // when it was finalized into the spool
	Key        string    `json:"key,omitempty"` // set once uploaded
	ETag       string    `json:"etag,omitempty"`
	Outcome    string    `json:"outcome,omitempty"`
	UploadedAt time.Time `json:"uploaded_at,omitzero"`
}

// Records is how many sequence numbers the file carries.
func (f File) Records() uint64 { return f.Last - f.First + 1 }

// Count is a number of files and their bytes.
type Count struct {
	Files int64 `json:"files"`
	Bytes int64 `json:"bytes"`
}

// Stats counts the spool's files by state. Eligible is the backlog (pending), Uploaded the
// files retained after their upload, Deleted those local retention removed.
type Stats struct {
	Finalized Count `json:"finalized"`
	Eligible  Count `json:"eligible"`
	Uploaded  Count `json:"uploaded"`
	Deleted   Count `json:"deleted"`
}

// Of returns the count of one state.
func (s Stats) Of(st State) Count {
	if c := s.ptr(st); c != nil {
		return *c
	}
	return Count{}
}

func (s *Stats) ptr(st State) *Count {
	switch st {
	case Finalized:
		return &s.Finalized
	case Eligible:
		return &s.Eligible
	case Uploaded:
		return &s.Uploaded
	case Deleted:
		return &s.Deleted
	}
	return nil
}

func (s *Stats) move(size int64, from, to State) {
	if c := s.ptr(from); c != nil {
		c.Files--
		c.Bytes -= size
	}
	if c := s.ptr(to); c != nil {
		c.Files++
		c.Bytes += size
	}
}

// state is the catalog replayed: every file not yet deleted, in sequence order.
type state struct {
	dir   string
	files map[uint64]*File
	order []uint64 // ids ascending; may hold deleted ids until compacted
	gone  int      // deleted ids still in order
	next  uint64   // the next file's first sequence number
	stats Stats
}

func newState(dir string) *state {
	return &state{dir: dir, files: map[uint64]*File{}, next: 1}
}

// apply applies one decoded record. Its error says what is wrong; the caller names the line.
func (s *state) apply(r *record) error {
	if r.Type == recFinalized {
		return s.finalized(r)
	}
	f, ok := s.files[r.ID]
	if !ok {
		return fmt.Errorf("%s record for id %d: no such file (never finalized, or already deleted)", r.Type, r.ID)
	}
	want, to := map[string]State{recEligible: Finalized, recUploaded: Eligible, recDeleted: Uploaded}[r.Type], stateOf[r.Type]
	if f.State != want {
		return fmt.Errorf("%s record for id %d, which is %s (want %s)", r.Type, r.ID, f.State, want)
	}
	s.stats.move(f.Size, f.State, to)
	f.State = to
	switch r.Type {
	case recUploaded:
		f.Key, f.ETag, f.Outcome, f.UploadedAt = r.Key, r.ETag, r.Outcome, r.At
	case recDeleted:
		delete(s.files, r.ID)
		s.gone++
		if s.gone > 1024 && s.gone > len(s.order)/2 {
			s.order = slices.DeleteFunc(s.order, func(id uint64) bool { return s.files[id] == nil })
			s.gone = 0
		}
	}
	return nil
}

func (s *state) finalized(r *record) error {
	if r.First != s.next {
		return fmt.Errorf("finalized record with first sequence %d, want %d (the one after the previous file's last)", r.First, s.next)
	}
	if r.Last < r.First || r.ID != r.First {
		return fmt.Errorf("finalized record with id %d, first %d, last %d: want id = first ≤ last", r.ID, r.First, r.Last)
	}
	if want := readyName(r.Dataset, r.First, r.Last, r.Ext); r.Path != want {
		return fmt.Errorf("finalized record with path %q, want %q", r.Path, want)
	}
	f := &File{
		ID: r.ID, Dataset: r.Dataset, Name: r.Path, Path: filepath.Join(s.dir, filepath.FromSlash(r.Path)),
		Size: *r.Size, SHA256: r.SHA256, First: r.First, Last: r.Last, Time: r.Time.UTC(), Ext: r.Ext,
		Clock: r.Clock, State: Finalized, Added: r.At.UTC(),
	}
	s.files[f.ID] = f
	s.order = append(s.order, f.ID)
	s.next = r.Last + 1
	if s.next == 0 {
		return errors.New("sequence numbers exhausted")
	}
	s.stats.move(f.Size, 0, Finalized)
	return nil
}

var stateOf = map[string]State{recFinalized: Finalized, recEligible: Eligible, recUploaded: Uploaded, recDeleted: Deleted}

// list returns copies of the files in state st, oldest (lowest First) first.
func (s *state) list(st State) []File { return s.listN(st, 0) }

// listN returns copies of the first n files in state st (n ≤ 0: all), oldest first.
func (s *state) listN(st State, n int) []File {
	want := int(s.stats.Of(st).Files)
	if n > 0 {
		want = min(want, n)
	}
	out := make([]File, 0, want)
	for _, id := range s.order {
		if len(out) == want {
			break
		}
		if f := s.files[id]; f != nil && f.State == st {
			out = append(out, *f)
		}
	}
	return out
}

// waiting sums the files in state st: how many, their bytes, the earliest event time.
func (s *state) waiting(st State) (files, bytes int64, oldest time.Time) {
	c := s.stats.Of(st)
	for _, id := range s.order {
		if f := s.files[id]; f != nil && f.State == st && (oldest.IsZero() || f.Time.Before(oldest)) {
			oldest = f.Time
		}
	}
	return c.Files, c.Bytes, oldest
}

// oldest returns the file in state st with the lowest First.
func (s *state) oldest(st State) (File, bool) {
	for _, id := range s.order {
		if f := s.files[id]; f != nil && f.State == st {
			return *f, true
		}
	}
	return File{}, false
}
