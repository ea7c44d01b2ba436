package transfer

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/mem"
)

// shrinking truncates a file once the put has read from it (and, when to > 1, makes it grow
// past its size again), then puts as usual.
type shrinking struct {
	*store.Store
	path string
	to   int64
}

func (s *shrinking) Put(ctx context.Context, key string, body io.Reader, o *store.PutOptions) (store.ObjectInfo, error) {
	var one [1]byte
	if _, err := io.ReadFull(body, one[:]); err != nil {
		return store.ObjectInfo{}, err
	}
	if err := os.Truncate(s.path, s.to); err != nil {
		return store.ObjectInfo{}, err
	}
	if s.to > 1 {
		// It grows again past its size.
		f, _ := os.OpenFile(s.path, os.O_WRONLY|os.O_APPEND, 0)
		f.Write(make([]byte, 200))
		f.Close()
	}
	return s.Store.Put(ctx, key, body, o)
}

func TestRunLocalFileChanged(t *testing.T) {
	for _, to := range []int64{10, 50} {
		dir := t.TempDir()
		path := filepath.Join(dir, "f")
		os.WriteFile(path, make([]byte, 100), 0o644)
		m := store.New(mem.New(), nil)
		_, err := Run(context.Background(), NewLocal(dir), &shrinking{m, path, to}, []Task{{Src: "f", Dst: "f", Size: 100}}, Options{})
		if !errors.Is(err, ErrLocalChanged) || !strings.Contains(err.Error(), path) || errors.Is(err, store.ErrUnavailable) {
			t.Errorf("truncated to %d: %v, want ErrLocalChanged naming %s", to, err, path)
		}
		if _, err := m.Head(context.Background(), "f"); !errors.Is(err, store.ErrNotExist) {
			t.Errorf("truncated to %d: an object was left (%v)", to, err)
		}
	}
}
