package lease

import (
	"io"

	"github.com/wharfdata/wharf/internal/textfmt"
)

// WriteText writes st for people, as `wharf lease show` shows it: the holder (or who released
// it), and the log's head.
func (st State) WriteText(w io.Writer) error {
	r := textfmt.Rows{Width: 10}
	r.Row("lease", "%s", st.Name)
	switch l := st.Lease; {
	case l == nil:
		r.Row("holder", "none (never acquired here, or a machine lease)")
	case l.Released:
		r.Row("holder", "none: released by %s under fence %d", l.Holder, l.Fence)
	default:
		r.Row("holder", "%s, fence %d, TTL %s", l.Holder, l.Fence, l.TTL())
		r.Row("renewed", "%s UTC by the holder's clock (expiry is judged by each contender's own clock)", textfmt.Time(l.RenewedAt))
	}
	if p := st.Pointer; p != nil {
		entries := "entries"
		if p.Seq == 1 {
			entries = "entry"
		}
		r.Row("pointer", "fence %d, %d %s, kind %s", p.Fence, p.Seq, entries, textfmt.Dash(p.Kind))
		r.Row("head", "%s", textfmt.Dash(p.Head))
	}
	_, err := r.WriteTo(w)
	return err
}
