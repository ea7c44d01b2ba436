package lease

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/wharfdata/wharf/cas"
)

// fenceOld fences the holder of a lease of wharf before record format 2 that this acquisition
// h took over. That protocol's commit advances the pointer under the revision its holder last
// saw, and its acquisitions raised the pointer's fence to stop an earlier holder's commit
// (which would go on to write its manifest and _SUCCESS); so does this one, once: the pointer
// takes h's fence and the log's head, and is never read again. A commit of the old holder
// that landed in the pointer since the acquisition read it is first taken into the record.
func (l *Leaser) fenceOld(ctx context.Context, h *Lease) error {
	rev := h.oldPointer
	if rev == "" {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for try := 0; ; try++ {
		p := h.rec.Pointer()
		p.Name, p.Fence = h.name, h.fence
		b, err := json.Marshal(p)
		if err != nil {
			return err
		}
		if _, err = l.kv.Update(ctx, PointerKey(h.name), b, rev); !errors.Is(err, cas.ErrConflict) {
			h.oldPointer = ""
			return err
		}
		if try == 2 {
			return fmt.Errorf("acquire lease %q: fencing its holder of an earlier wharf: %s keeps changing", h.name, PointerKey(h.name))
		}
		// The old holder committed since the acquisition read the pointer: its commit is the
		// log's head.
		var cur Pointer
		raw, r, err := l.kv.Get(ctx, PointerKey(h.name))
		switch {
		case errors.Is(err, cas.ErrNoRecord):
			return nil // gone: no old holder can commit
		case err != nil:
			return err
		}
		if err := json.Unmarshal(raw, &cur); err != nil {
			return fmt.Errorf("%s is not a wharf pointer: %w", PointerKey(h.name), err)
		}
		if cur.Fence >= h.fence {
			return nil // raised past this acquisition already
		}
		if cur.Seq > h.rec.Seq {
			err := h.replace(ctx, "acquire", ErrNotHeld, "", func(r *Record) {
				r.Kind, r.Seq, r.Head, r.HeadEntry = cur.Kind, cur.Seq, cur.Head, nil
			})
			if err != nil {
				return err
			}
		}
		rev = r
	}
}
