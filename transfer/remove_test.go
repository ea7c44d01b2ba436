package transfer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/mem"
)

// Remove deletes exactly the keys under the prefix, across batches, naming each once after
// its batch; a dry run names the same keys and deletes none; a failure of the callback stops
// it.
func TestRemoveDeletesThePrefixInBatches(t *testing.T) {
	ctx := context.Background()
	s := store.New(mem.New(), nil)
	const n = RemoveBatch + 7
	for i := range n {
		if _, err := s.Put(ctx, fmt.Sprintf("logs/%05d", i), strings.NewReader("x"), nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Put(ctx, "logs-old/keep", strings.NewReader("x"), nil); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		c := 0
		for _, err := range s.Walk(ctx, "") {
			if err != nil {
				t.Fatal(err)
			}
			c++
		}
		return c
	}
	seen := map[string]int{}
	got, err := Remove(ctx, s, "logs/", nil, true, func(k string) error { seen[k]++; return nil })
	if err != nil || got != n || len(seen) != n || count() != n+1 {
		t.Fatalf("dry run: %d, %v; named %d; %d keys left, want %d", got, err, len(seen), count(), n+1)
	}
	stop := errors.New("stop")
	if _, err := Remove(ctx, s, "logs/", nil, false, func(string) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("a failing callback: %v", err)
	}
	seen = map[string]int{}
	got, err = Remove(ctx, s, "logs/", nil, false, func(k string) error { seen[k]++; return nil })
	if err != nil || count() != 1 {
		t.Fatalf("remove: %d, %v; %d keys left, want only logs-old/keep", got, err, count())
	}
	for k, c := range seen {
		if c != 1 || !strings.HasPrefix(k, "logs/") {
			t.Errorf("named %s %d times", k, c)
		}
	}
}
