package lease

import (
	"context"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/store"
)

// OpenURL opens the store a URL names and a Leaser over it; the store's Log shows the lease
// and its log's head; a URL that names no store fails naming it.
func TestEnvOpensTheLeaseStore(t *testing.T) {
	ctx := context.Background()
	env := Env{Store: &store.Config{}}
	cfg := DefaultConfig()
	cfg.Node = "host-a"
	l, err := OpenURL(ctx, "mem://lease-env/locks", cfg, env)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Store().Close()
	if l.Mode() != ModeBucket {
		t.Fatalf("mode %s, want %s", l.Mode(), ModeBucket)
	}
	h, err := l.Acquire(ctx, "job")
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	s, err := env.OpenStore(ctx, "mem://lease-env/locks")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st, err := OpenLog(s, "job").State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Name != "job" || st.Lease == nil || !st.Lease.Released || st.Lease.Holder != "host-a" || st.Pointer == nil || st.Pointer.Fence != 1 {
		t.Errorf("state %+v (lease %+v, pointer %+v)", st, st.Lease, st.Pointer)
	}
	if st, err := OpenLog(s, "never").State(ctx); err != nil || st.Lease != nil || st.Pointer != nil {
		t.Errorf("a lease never acquired: %+v, %v", st, err)
	}
	if _, err := OpenURL(ctx, "nosuch://x", cfg, env); err == nil {
		t.Error("a URL of no store opened")
	}
	if _, err := env.OpenStore(ctx, "mem://"); err == nil || !strings.Contains(err.Error(), "mem://") {
		t.Errorf("a mem URL without a name: %v", err)
	}
}
