package lease

import (
	"context"
	"testing"
	"time"
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
