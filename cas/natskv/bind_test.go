package natskv

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/wharfdata/wharf/cas"
	"github.com/wharfdata/wharf/internal/testenv"
)

// Two processes open a new bucket at once: one creates it (its stream allows direct gets, the
// key-value default) and the other turns direct gets off while the first has not yet read
// the stream. The first must not keep a handle that still sends direct gets, which no replica
// answers any more: every read would fail with "no responders" on every server.
func TestNATSOpenRacingAnotherOpener(t *testing.T) {
	c := testenv.NATS(t)
	ctx := context.Background()
	name := fmt.Sprintf("wharf-cas-bind-%d", time.Now().UnixNano())
	nc, err := nats.Connect(c.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: name, History: 1, Replicas: 3}); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = js.DeleteKeyValue(ctx, name) }()
	st, err := js.Stream(ctx, "KV_"+name)
	if err != nil {
		t.Fatal(err)
	}
	if !st.CachedInfo().Config.AllowDirect {
		t.Fatal("a new key-value bucket refuses direct gets: this test no longer sets up the race")
	}
	afterCreate = func() { // the other opener, between this one's bind and its read of the stream
		cfg := st.CachedInfo().Config
		cfg.AllowDirect = false
		if _, err := js.UpdateStream(ctx, cfg); err != nil {
			t.Error(err)
		}
	}
	defer func() { afterCreate = func() {} }()
	k, err := Open(ctx, Options{Servers: c.URL(), Bucket: name, RetryFor: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	if _, _, err := k.Get(ctx, "absent"); !errors.Is(err, cas.ErrNoRecord) {
		t.Fatalf("get of an absent key: %v, want cas.ErrNoRecord", err)
	}
	rev, err := k.Create(ctx, "k", []byte("v"))
	if err != nil {
		t.Fatal(err)
	}
	if v, got, err := k.Get(ctx, "k"); err != nil || got != rev || string(v) != "v" {
		t.Fatalf("read back %q at %s (%v), want \"v\" at %s", v, got, err, rev)
	}
}
