package backfill

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestPipeStreamCountsWhatItsReaderTook holds the promise of the standard output sink on a
// pipe: delivered means received, the bytes still in the pipe are not, and a reader that
// closed the pipe with bytes left in it is EPIPE.
func TestPipeStreamCountsWhatItsReaderTook(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	u, ok := recordStream(w).(Unreader)
	if !ok {
		t.Fatalf("the write end of a pipe is %T, not an Unreader", recordStream(w))
	}
	if _, err := u.Write([]byte("0123456789")); err != nil {
		t.Fatal(err)
	}
	if n, err := u.Unread(); n != 10 || err != nil {
		t.Fatalf("Unread = %d, %v; want 10 bytes in the pipe", n, err)
	}
	if _, err := io.ReadFull(r, make([]byte, 4)); err != nil {
		t.Fatal(err)
	}
	if n, err := u.Unread(); n != 6 || err != nil {
		t.Fatalf("Unread = %d, %v after the reader took 4; want 6", n, err)
	}
	r.Close()
	if n, err := u.Unread(); !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("Unread = %d, %v once the reader closed the pipe; want EPIPE", n, err)
	}
	if _, err := u.Write([]byte("x")); !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("a write to a pipe without a reader: %v, want EPIPE (SIGPIPE ignored)", err)
	}
}

// TestRecordStreamTellsFilesApart: a regular file is synced before a commit, anything else
// (here /dev/null, and a writer that is no file) is written to as it is.
func TestRecordStreamTellsFilesApart(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "records"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, ok := recordStream(f).(Syncer); !ok {
		t.Errorf("a regular file is %T, not a Syncer", recordStream(f))
	}
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	switch s := recordStream(null).(type) {
	case Syncer, Unreader:
		t.Errorf("%s is %T: want it written to as it is", os.DevNull, s)
	}
	var b bytes.Buffer
	if s := recordStream(&b); s != io.Writer(&b) {
		t.Errorf("a writer that is no file became %T", s)
	}
}
