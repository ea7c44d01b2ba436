package transfer

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/mem"
)

func TestSumCountsEveryObjectUnderThePrefix(t *testing.T) {
	ctx := context.Background()
	s := store.New(mem.New(), nil)
	for key, body := range map[string]string{"logs/a": "12345", "logs/sub/b": "678", "logs-old/c": "xxxxxxxx", "top": "z"} {
		if _, err := s.Put(ctx, key, strings.NewReader(body), nil); err != nil {
			t.Fatal(err)
		}
	}
	for prefix, want := range map[string]Usage{"logs/": {2, 8}, "": {4, 17}, "none/": {0, 0}} {
		got, err := Sum(ctx, s, prefix)
		if err != nil || got != want {
			t.Errorf("Sum(%q) = %+v, %v; want %+v", prefix, got, err, want)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Sum(cancelled, s, "logs/"); !errors.Is(err, context.Canceled) {
		t.Errorf("Sum with a cancelled context = %v, want context.Canceled", err)
	}
}
