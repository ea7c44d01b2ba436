package dataset

import (
	"encoding/json"
	"fmt"
	"time"
)

// Bound is a value of a chunking key or cursor column, as the source returned it, so that it
// compares exactly as the source compares it: an integer, a text (SQLite keeps timestamps as
// text) or a time. Its zero value means "no bound".
type Bound struct {
	kind byte // 0 none, 'i', 's', 't'
	i    int64
	s    string
	t    time.Time
}

// IntBound, TextBound and TimeBound make bounds.
func IntBound(v int64) Bound      { return Bound{kind: 'i', i: v} }
func TextBound(v string) Bound    { return Bound{kind: 's', s: v} }
func TimeBound(v time.Time) Bound { return Bound{kind: 't', t: v} }

// IsZero reports whether b is no bound.
func (b Bound) IsZero() bool { return b.kind == 0 }

// Value is b as a query argument.
func (b Bound) Value() any {
	switch b.kind {
	case 'i':
		return b.i
	case 's':
		return b.s
	case 't':
		return b.t
	}
	return nil
}

func (b Bound) String() string {
	if b.kind == 't' {
		return b.t.Format(time.RFC3339Nano)
	}
	return fmt.Sprint(b.Value())
}

type boundJSON struct {
	Int  *int64     `json:"int,omitempty"`
	Text *string    `json:"text,omitempty"`
	Time *time.Time `json:"time,omitempty"`
}

// MarshalJSON writes {"int":1}, {"text":"…"} or {"time":"…"}; null for no bound.
func (b Bound) MarshalJSON() ([]byte, error) {
	switch b.kind {
	case 'i':
		return json.Marshal(boundJSON{Int: &b.i})
	case 's':
		return json.Marshal(boundJSON{Text: &b.s})
	case 't':
		return json.Marshal(boundJSON{Time: &b.t})
	}
	return []byte("null"), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (b *Bound) UnmarshalJSON(data []byte) error {
	var j *boundJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	switch {
	case j == nil:
		*b = Bound{}
	case j.Int != nil:
		*b = IntBound(*j.Int)
	case j.Text != nil:
		*b = TextBound(*j.Text)
	case j.Time != nil:
		*b = TimeBound(*j.Time)
	default:
		*b = Bound{}
	}
	return nil
}

// Range is one chunk's rows: chunking key from Lo to Hi inclusive, or (Null) the rows whose
// key is NULL.
type Range struct {
	Lo   Bound `json:"lo"`
	Hi   Bound `json:"hi"`
	Null bool  `json:"null,omitempty"`
}
