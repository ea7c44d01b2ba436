package natskv

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wharfdata/wharf/cas"
	"github.com/wharfdata/wharf/cas/castest"
	"github.com/wharfdata/wharf/internal/testenv"
	"github.com/wharfdata/wharf/store"
)

// open opens a fresh bucket on the test cluster, deleted when t ends.
func open(t *testing.T, name string) *KV {
	t.Helper()
	c := testenv.NATS(t)
	k, err := Open(context.Background(), Options{Servers: c.URL(), Bucket: fmt.Sprintf("%s-%d", name, time.Now().UnixNano()),
		RetryFor: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.DeleteBucket(context.Background()); k.Close() })
	return k
}

func TestNATSKeepsTheContract(t *testing.T) {
	k := open(t, "wharf-cas-conformance")
	if n, err := k.Replicas(context.Background()); err != nil || n != 3 {
		t.Fatalf("replicas %d (%v) on a three-node cluster, want 3", n, err)
	}
	if direct, err := k.Direct(context.Background()); err != nil || direct {
		t.Fatalf("direct gets %v (%v): a replica behind the last write could answer a read", direct, err)
	}
	var n atomic.Int64
	castest.Run(t, func(t *testing.T) cas.Store { return cas.WithPrefix(k, fmt.Sprintf("case-%d/", n.Add(1))) })
}

func TestSubjectsAreOneToOne(t *testing.T) {
	seen := map[string]string{}
	for _, k := range []string{"a/b.c", "a.b/c", "a/b/c", "a.b.c", "_wharf/leases/x.json", "_wharf/leases/x/json"} {
		s := Subject(k)
		if other, ok := seen[s]; ok {
			t.Errorf("%s and %s both map to %s", k, other, s)
		}
		seen[s] = k
		if strings.Contains(s, "..") || strings.HasPrefix(s, ".") || strings.HasSuffix(s, ".") {
			t.Errorf("%s maps to %s, not a valid key", k, s)
		}
	}
}

// Options it cannot use, and servers that do not answer, are errors of their kind that name
// no secret (and never a panic).
func TestOpenFailuresNameTheirKind(t *testing.T) {
	ctx := context.Background()
	_, err := Open(ctx, Options{Servers: "nats://127.0.0.1:1", Bucket: "bad name"})
	if !errors.Is(err, store.ErrConfig) {
		t.Errorf("a bad bucket name: %v, want ErrConfig", err)
	}
	_, err = Open(ctx, Options{Servers: "nats://u:hunter2@127.0.0.1:1", Bucket: "b"})
	if !errors.Is(err, store.ErrConfig) || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("credentials in the URL: %v, want ErrConfig naming no secret", err)
	}
	port := testenv.FreeLoopbackPort(t)
	_, err = Open(ctx, Options{Servers: fmt.Sprintf("nats://127.0.0.1:%d", port), Bucket: "b", Password: "hunter2",
		User: "u", Timeout: 200 * time.Millisecond})
	if !errors.Is(err, store.ErrUnavailable) || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("no server: %v, want ErrUnavailable naming no secret", err)
	}
}

// A read through one server sees the write just acknowledged through another (reads go to the
// stream's leader, not to a replica that may be behind). Stale direct reads are rare on
// loopback, so TestNATSKeepsTheContract also checks that direct gets are off.
func TestNATSReadsSeeTheLastWrite(t *testing.T) {
	c := testenv.NATS(t)
	name := fmt.Sprintf("wharf-cas-reads-%d", time.Now().UnixNano())
	open := func(server string) *KV {
		k, err := Open(context.Background(), Options{Servers: server, Bucket: name, Replicas: 3, RetryFor: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { k.Close() })
		return k
	}
	w := open(c.URLs[0])
	t.Cleanup(func() { _ = w.DeleteBucket(context.Background()) })
	readers := []*KV{open(c.URLs[1]), open(c.URLs[2])}
	ctx := context.Background()
	rev, err := w.Create(ctx, "k", []byte("0"))
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 300; i++ {
		if rev, err = w.Update(ctx, "k", []byte(fmt.Sprint(i)), rev); err != nil {
			t.Fatal(err)
		}
		for _, r := range readers {
			v, got, err := r.Get(ctx, "k")
			if err != nil || got != rev || string(v) != fmt.Sprint(i) {
				t.Fatalf("write %d at revision %s; a read through another server: %s at %s (%v)", i, rev, v, got, err)
			}
		}
	}
}
