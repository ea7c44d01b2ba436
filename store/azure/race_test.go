package azure

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"

	"github.com/wharfdata/wharf/store"
)

// TestRacingBlockUploads: two large puts race on one key. The one that commits first discards
// the other's staged blocks, so the later commit fails: ErrUnavailable for an unconditional
// put, ErrPreconditionFailed for a conditional one, and the key holds the winner's body whole.
func TestRacingBlockUploads(t *testing.T) {
	t.Parallel()
	s, c, _ := openProxied(t, nil)
	for _, conditional := range []bool{false, true} {
		key := "raced"
		if conditional {
			key = "raced-create"
		}
		slow := randomData(2<<20, 10)
		fast := randomData(2<<20+3, 11)
		gate := make(chan struct{})
		done := make(chan error, 1)
		go func() {
			body := io.MultiReader(bytes.NewReader(slow), gated{gate, t.Context().Done()})
			_, err := s.Put(t.Context(), key, body, &store.PutOptions{Size: -1, IfNoneMatch: conditional})
			done <- err
		}()
		// Wait until the slow put's two blocks are staged, then let the fast put commit first.
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			bl, err := c.blockBlob(key).GetBlockList(t.Context(), blockblob.BlockListTypeUncommitted, nil)
			if err == nil && len(bl.UncommittedBlocks) == 2 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the slow put's blocks were never staged")
			}
		}
		if _, err := s.Put(t.Context(), key, bytes.NewReader(fast), &store.PutOptions{Size: -1, IfNoneMatch: conditional}); err != nil {
			t.Fatalf("the fast put: %v", err)
		}
		close(gate)
		err := <-done
		want := store.ErrUnavailable
		if conditional {
			want = store.ErrPreconditionFailed
		}
		var e *store.Error
		if !errors.Is(err, want) || !errors.As(err, &e) {
			t.Errorf("conditional %v: the slower commit: %v, want %s", conditional, err, want.Code())
		} else if !conditional && !strings.Contains(err.Error(), "committed first") {
			t.Errorf("the slower commit's error does not say why: %v", err)
		}
		if got := readAll(t, s, key); got != string(fast) {
			t.Errorf("conditional %v: the key holds %d bytes, want the winner's %d", conditional, len(got), len(fast))
		}
	}
}

// gated blocks until gate is closed (or the test ends), then ends the body.
type gated struct{ gate, end <-chan struct{} }

func (g gated) Read([]byte) (int, error) {
	select {
	case <-g.gate:
	case <-g.end:
	}
	return 0, io.EOF
}
