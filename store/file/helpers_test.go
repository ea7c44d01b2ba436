package file_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/store/driver"
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

func put(t *testing.T, s driver.Bucket, key, body string, opts *driver.PutOptions) driver.ObjectInfo {
	t.Helper()
	if opts == nil {
		opts = &driver.PutOptions{}
	}
	info, err := s.Put(ctx, key, strings.NewReader(body), opts)
	if err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
	return info
}

func read(t *testing.T, s driver.Bucket, key string, opts *driver.GetOptions) string {
	t.Helper()
	if opts == nil {
		opts = &driver.GetOptions{}
	}
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

func keys(infos []driver.ObjectInfo) string {
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

func newStoreAt(t *testing.T, dir string) (*file.Store, string) {
	t.Helper()
	s, err := file.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s, dir
}
