package store

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
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
