package file_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
)

func TestDescribe(t *testing.T) {
	s, dir := newStore(t)
	d := s.Describe()
	if d.Scheme != "file" || d.Location != "file://"+filepath.ToSlash(dir) {
		t.Errorf("describe = %+v", d)
	}
	if d.MountType == "" || strings.HasPrefix(d.MountType, "0x") {
		t.Errorf("mount type %q of %s not recognised", d.MountType, dir)
	}
	missing, _ := newStoreAt(t, filepath.Join(dir, "not", "yet"))
	if got := missing.Describe().MountType; got != d.MountType {
		t.Errorf("missing root's mount type %q, want its parent's %q", got, d.MountType)
	}
}

func TestOpenURL(t *testing.T) {
	dir := t.TempDir()
	s, err := store.Open(ctx, "file://"+filepath.ToSlash(dir)+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, "x/y", strings.NewReader("v"), nil); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "x", "y")); err != nil || string(b) != "v" {
		t.Fatalf("file = %q, %v", b, err)
	}
	if d := s.Describe(); d.Scheme != "file" || d.MountType == "" {
		t.Errorf("describe = %+v", d)
	}
	if _, err := s.Copy(ctx, "x/y", "x/z", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "x", "z")); err != nil {
		t.Errorf("copy: %v", err)
	}
}

func TestPermissionDenied(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root ignores file permissions")
	}
	s, dir := newStore(t)
	put(t, s, "ro/k", "v", nil)
	if err := os.Chmod(filepath.Join(dir, "ro"), 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(dir, "ro"), 0o700) })
	if _, err := s.Put(ctx, "ro/k", strings.NewReader("x"), &driver.PutOptions{}); !errors.Is(err, driver.ErrForbidden) {
		t.Fatalf("put into a read-only directory: %v", err)
	}
}
