package file_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/file"
)

var ctx = context.Background()

// newStore returns a store on a fresh directory, and the directory.
func newStore(t *testing.T) (*file.Store, string) {
	t.Helper()
	dir := t.TempDir()
	s, err := file.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s, dir
}

func put(t *testing.T, s store.Store, key, body string, opts *store.PutOptions) store.ObjectInfo {
	t.Helper()
	info, err := s.Put(ctx, key, strings.NewReader(body), opts)
	if err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
	return info
}

func read(t *testing.T, s store.Store, key string, opts *store.GetOptions) string {
	t.Helper()
	obj, err := s.Get(ctx, key, opts)
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	defer obj.Close()
	b, err := io.ReadAll(obj)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// tempFiles returns the names left in the store's temporary directory.
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(filepath.Join(dir, ".wharf-meta", "tmp"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	return names
}

func keys(infos []store.ObjectInfo) string {
	var ks []string
	for _, o := range infos {
		ks = append(ks, o.Key)
	}
	return strings.Join(ks, ",")
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// cancelReader cancels a context when it is read, then reports nothing read.
type cancelReader struct{ cancel context.CancelFunc }

func (r cancelReader) Read([]byte) (int, error) {
	r.cancel()
	return 0, nil
}

// putAll writes an empty object at each key, eight at a time.
func putAll(t *testing.T, s store.Store, keys []string) {
	t.Helper()
	ch := make(chan string)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for k := range ch {
				if _, err := s.Put(ctx, k, strings.NewReader(""), nil); err != nil {
					t.Error(err)
				}
			}
		})
	}
	for _, k := range keys {
		ch <- k
	}
	close(ch)
	wg.Wait()
}

func newStoreAt(t *testing.T, dir string) (*file.Store, string) {
	t.Helper()
	s, err := file.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s, dir
}
