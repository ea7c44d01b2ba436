package driver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"syscall"
	"testing"
	"time"
)

func TestHTTPClientResponseTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/stall-headers":
			select {
			case <-release:
			case <-r.Context().Done():
			}
		case "/stall-body":
			w.Write([]byte("first bytes"))
			w.(http.Flusher).Flush()
			select {
			case <-release:
			case <-r.Context().Done():
			}
		default:
			w.Write([]byte("ok"))
		}
	}))
	defer srv.Close()
	defer close(release)
	c := NewHTTPClient(DefaultRetryPolicy())
	ctx := withResponseTimeout(context.Background(), 150*time.Millisecond)

	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/ok", nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "ok" {
		t.Fatalf("body %q", b)
	}

	start := time.Now()
	req, _ = http.NewRequestWithContext(ctx, "GET", srv.URL+"/stall-headers", nil)
	_, err = c.Do(req)
	if err == nil || !IsTransport(err) {
		t.Fatalf("stalled headers: err = %v, want a transport fault", err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("took %v: the response timeout did not apply", el)
	}

	req, _ = http.NewRequestWithContext(ctx, "GET", srv.URL+"/stall-body", nil)
	resp, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !errors.Is(err, errBodyStalled) || !IsTransport(err) {
		t.Fatalf("stalled body: err = %v, want errBodyStalled", err)
	}
}

func TestIsNetErrorLeavesLocalErrnosOut(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"a file that is not there", fmt.Errorf("reading the body: %w", &fs.PathError{Op: "open", Path: "/x", Err: syscall.ENOENT}), false},
		{"a file that cannot be read", &fs.PathError{Op: "read", Path: "/x", Err: syscall.EIO}, false},
		{"permission denied", syscall.EACCES, false},
		{"a refused dial", &net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}, true},
		{"any socket operation", &net.OpError{Op: "read", Net: "tcp", Err: errors.New("something odd")}, true},
		{"a reset, wrapped", fmt.Errorf("put: %w", syscall.ECONNRESET), true},
		{"a broken pipe", syscall.EPIPE, true},
		{"a DNS timeout", &net.DNSError{Err: "timeout", IsTimeout: true}, true},
		{"an end of stream", io.EOF, true},
		{"anything else", errors.New("no"), false},
	} {
		if got := isNetError(tc.err); got != tc.want {
			t.Errorf("%s: isNetError(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}
