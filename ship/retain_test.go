package ship

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wharfdata/wharf/spool"
	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/mem"
)

// countingSpool counts the service's Remove calls per file.
type countingSpool struct {
	*spool.Spool
	mu      sync.Mutex
	removes map[uint64]int
}

func (c *countingSpool) Remove(ctx context.Context, id uint64) error {
	c.mu.Lock()
	c.removes[id]++
	c.mu.Unlock()
	return c.Spool.Remove(ctx, id)
}

// TestShipRemovesEachFileOnce: with delete_after_upload, each attempt removes its file beside
// the next uploads while snapshots (taken every few milliseconds) remove what an earlier run
// left recorded but not removed; every file is removed exactly once, and the run returns only
// once all of them are.
func TestShipRemovesEachFileOnce(t *testing.T) {
	fx := newFixture(t, 10, 11, 12, 13, 14)
	st := store.New(&slow{Bucket: mem.New(), d: time.Millisecond}, nil)
	cfg := fx.config("mem://x")
	cfg.Retention = Retention{Mode: Keep}
	if _, err := runToEnd(t, cfg, options(t, st)); err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		fx.add(t, "events", 20+i)
	}
	cfg.Retention = Retention{Mode: DeleteAfterUpload}
	cfg.PollInterval, cfg.UploadConcurrency = 2*time.Millisecond, 4
	var logs syncBuffer
	opts := options(t, st)
	opts.Logger = slog.New(slog.NewTextHandler(io.MultiWriter(&logs, t.Output()), nil))
	cs := &countingSpool{removes: map[uint64]int{}}
	opts.OpenSpool = func(dir string) (Spool, error) {
		sp, err := spool.Open(dir, spool.OpenOptions{})
		cs.Spool = sp
		return cs, err
	}
	if _, err := runToEnd(t, cfg, opts); err != nil {
		t.Fatal(err)
	}
	fx.checkShipped(t, st, cfg)
	for _, f := range fx.files {
		if n := cs.removes[f.ID]; n != 1 {
			t.Errorf("file %d removed %d times, want once", f.ID, n)
		}
	}
	if strings.Contains(logs.String(), "could not remove") {
		t.Errorf("a removal failed:\n%s", logs.String())
	}
	if n := fx.readyFiles(t); n != 0 {
		t.Errorf("%d files left in ready/ when the drained run returned", n)
	}
	if st := fx.openSpool(t).Stats(); st.Deleted.Files != 45 {
		t.Errorf("spool stats %+v, want 45 deleted", st)
	}
}
