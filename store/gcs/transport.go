package gcs

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"

	"github.com/wharfdata/wharf/store/driver"
)

// readGuardKey marks the context of a Get with its *readGuard.
type readGuardKey struct{}

// errReopen refuses the SDK's own reopening of a broken read.
var errReopen = errors.New("gcs: the SDK's reopen of a broken read was refused: the store's retry policy resumes reads")

// readGuard makes a Get exactly one HTTP request. When a body breaks mid-stream, the SDK's
// reader sends a ranged request of its own to carry on: a retry outside wharf's policy. The
// guard refuses that second request and keeps the fault of the first body, which the Get's body
// then returns, so that the portable store resumes the read (pinned to the generation) under the policy.
type readGuard struct {
	mu      sync.Mutex
	sent    bool
	bodyErr error
	header  http.Header // the response's, for what the SDK's reader does not report
}

func withReadGuard(ctx context.Context) (context.Context, *readGuard) {
	g := &readGuard{}
	return context.WithValue(ctx, readGuardKey{}, g), g
}

// first reports whether this is the guarded Get's first request, and marks it sent.
func (g *readGuard) first() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	was := g.sent
	g.sent = true
	return !was
}

func (g *readGuard) fail(err error) {
	g.mu.Lock()
	if g.bodyErr == nil {
		g.bodyErr = err
	}
	g.mu.Unlock()
}

// fault returns the error the guarded body failed with, if it did.
func (g *readGuard) fault() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.bodyErr
}

// guardTransport enforces each request's readGuard, if it has one, and makes a guarded read
// ask for the object's bytes as stored.
type guardTransport struct{ base http.RoundTripper }

func (t guardTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	g, _ := req.Context().Value(readGuardKey{}).(*readGuard)
	if g == nil {
		return t.base.RoundTrip(req)
	}
	if !g.first() {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, errReopen
	}
	if req.Header.Get("Accept-Encoding") == "" {
		// A read asks for the stored bytes as stored: a server asked for no encoding
		// transcodes a gzip object (Cloud Storage and fake-gcs-server decompress it), and Go's
		// transport, left to ask for gzip itself, would decompress the answer.
		req = req.Clone(req.Context())
		req.Header.Set("Accept-Encoding", "gzip")
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	g.header = resp.Header
	g.mu.Unlock()
	resp.Body = &guardedBody{ReadCloser: resp.Body, g: g}
	return resp, nil
}

// headers returns the standard headers of the guarded read's response: the SDK's reader
// reports only Cache-Control and Content-Encoding of them.
func (g *readGuard) headers() driver.Headers {
	g.mu.Lock()
	defer g.mu.Unlock()
	return driver.Headers{
		CacheControl:       g.header.Get("Cache-Control"),
		ContentDisposition: g.header.Get("Content-Disposition"),
		ContentEncoding:    g.header.Get("Content-Encoding"),
		ContentLanguage:    g.header.Get("Content-Language"),
	}
}

// guardedBody records the first error other than io.EOF its body fails with.
type guardedBody struct {
	io.ReadCloser
	g *readGuard
}

func (b *guardedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		b.g.fail(err)
	}
	return n, err
}
