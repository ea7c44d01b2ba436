package lease

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wharfdata/wharf/cas"
	"github.com/wharfdata/wharf/store"
)

// A contender judges a held lease by the TTL the record carries, in whole milliseconds: the
// holder's deadline counts on no more (a TTL of 10 s + 999 µs is a record of 10 000 ms, and
// the holder's deadline is 999 µs before where it was, where no contender could see it), and
// a TTL below 1 ms, which the record would carry as 0, is refused.
func TestHolderCountsOnTheTTLTheRecordCarries(t *testing.T) {
	m := newMachine(t, memStore(), "host-a", func(c *Config) { c.TTL = 10*time.Second + 999*time.Microsecond })
	h := mustAcquire(t, m, "job")
	if rec := h.Record(); rec.TTL() != 10*time.Second {
		t.Fatalf("the record carries a TTL of %s", rec.TTL())
	}
	m.clock.Advance(8 * time.Second) // TTL 10 s less the skew bound 2 s
	select {
	case <-h.Lost():
	default:
		t.Fatal("the holder still counts on its lease 8 s after its acquisition")
	}
	c := testConfig("host-a")
	c.TTL, c.Skew, c.RenewEvery = 900*time.Microsecond, 0, 100*time.Microsecond
	if _, err := Open(context.Background(), memStore(), c, nil); err == nil {
		t.Fatal("a TTL of 900µs was accepted")
	}
}

// A commit or a save too large for the bucket to read back (cas.MaxValue) is refused before
// anything is written: it used to land, and leave a log (or a lease record) that every
// later read refused, for good, as "not a record wharf wrote".
func TestRecordsTheBucketCannotReadAreNotWritten(t *testing.T) {
	s := fileStore(t, t.TempDir(), "")
	m := newMachine(t, s, "host-a", nil)
	h := mustAcquire(t, m, "big")
	if _, err := h.Commit(ctx, "k", "small"); err != nil {
		t.Fatal(err)
	}
	huge := strings.Repeat("x", cas.MaxValue)
	if _, err := h.Commit(ctx, "k", huge); !errors.Is(err, store.ErrConfig) {
		t.Errorf("a commit of %d bytes: %v, want ErrConfig", len(huge), err)
	}
	if err := h.Save(ctx, huge); !errors.Is(err, store.ErrConfig) {
		t.Errorf("a save of %d bytes: %v, want ErrConfig", len(huge), err)
	}
	if e, err := m.Log("big").Head(ctx, "k"); err != nil || e.Seq != 1 {
		t.Fatalf("the log after: %+v, %v", e, err)
	}
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	mustAcquire(t, m, "big")
}
