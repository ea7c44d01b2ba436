package stdout_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/wharfdata/wharf/store"
	"github.com/wharfdata/wharf/store/driver"
	"github.com/wharfdata/wharf/store/stdout"
)

func TestPutWritesBody(t *testing.T) {
	var buf bytes.Buffer
	s := stdout.New(&buf)
	info, err := s.Put(context.Background(), "a.ndjson", strings.NewReader("one\ntwo\n"), &driver.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if info.Key != "a.ndjson" || info.Size != 8 {
		t.Errorf("info = %+v, want key a.ndjson size 8", info)
	}
	if got := buf.String(); got != "one\ntwo\n" {
		t.Errorf("wrote %q", got)
	}
}

func TestUnsupported(t *testing.T) {
	s := stdout.New(io.Discard)
	ctx := context.Background()
	cases := []struct {
		name string
		call func() error
	}{
		{"get", func() error { _, err := s.Get(ctx, "k", &driver.GetOptions{}); return err }},
		{"head", func() error { _, err := s.Head(ctx, "k"); return err }},
		{"delete", func() error { return s.Delete(ctx, "k", &driver.DeleteOptions{}) }},
		{"list", func() error { _, err := s.List(ctx, &store.ListOptions{}); return err }},
		{"put-if-none-match", func() error {
			_, err := s.Put(ctx, "k", strings.NewReader("x"), &store.PutOptions{IfNoneMatch: true})
			return err
		}},
		{"put-if-match", func() error {
			_, err := s.Put(ctx, "k", strings.NewReader("x"), &store.PutOptions{IfMatch: "e"})
			return err
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.call()
			if !errors.Is(err, store.ErrUnsupported) {
				t.Fatalf("err = %v, want ErrUnsupported", err)
			}
			var se *store.Error
			if !errors.As(err, &se) || se.Op == "" {
				t.Fatalf("err %v is not a *store.Error with an Op", err)
			}
		})
	}
}

func TestConcurrentPutsDoNotInterleave(t *testing.T) {
	var buf bytes.Buffer
	s := stdout.New(&buf)
	const n, size = 8, 64 << 10
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			body := bytes.Repeat([]byte{byte('a' + i)}, size)
			// Small reads make interleaving likely were Put not serialised.
			if _, err := s.Put(context.Background(), "k", &slowReader{b: body}, &driver.PutOptions{}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	out := buf.Bytes()
	if len(out) != n*size {
		t.Fatalf("wrote %d bytes, want %d", len(out), n*size)
	}
	for off := 0; off < len(out); off += size {
		chunk := out[off : off+size]
		if bytes.Count(chunk, chunk[:1]) != size {
			t.Fatalf("body at %d is interleaved", off)
		}
	}
}

type slowReader struct{ b []byte }

func (r *slowReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 100)], r.b)
	r.b = r.b[n:]
	return n, nil
}

func TestCancelledPut(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var buf bytes.Buffer
	_, err := stdout.New(&buf).Put(ctx, "k", strings.NewReader("x"), &driver.PutOptions{})
	if err != context.Canceled {
		t.Fatalf("err = %v, want context.Canceled unwrapped", err)
	}
	if buf.Len() != 0 {
		t.Errorf("wrote %q after cancel", buf.String())
	}
}

func TestBodyErrorIsUnavailable(t *testing.T) {
	boom := errors.New("boom")
	_, err := stdout.New(io.Discard).Put(context.Background(), "k", io.MultiReader(strings.NewReader("x"), errReader{boom}), &driver.PutOptions{})
	if !errors.Is(err, store.ErrUnavailable) || !errors.Is(err, boom) {
		t.Fatalf("err = %v, want ErrUnavailable wrapping boom", err)
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

func TestOpenByURL(t *testing.T) {
	for _, u := range []string{"-", "stdout://"} {
		s, err := store.Open(context.Background(), u, nil)
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		if d := s.Describe(); d.Scheme != "stdout" {
			t.Errorf("%s: describe = %+v", u, d)
		}
	}
}
