package driver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

type responseTimeoutKey struct{}

func withResponseTimeout(ctx context.Context, d time.Duration) context.Context {
	if d <= 0 {
		return ctx
	}
	return context.WithValue(ctx, responseTimeoutKey{}, d)
}

// ResponseTimeout returns the response timeout of the current attempt, set by RetryPolicy.Do,
// or 0 when there is none.
func ResponseTimeout(ctx context.Context) time.Duration {
	d, _ := ctx.Value(responseTimeoutKey{}).(time.Duration)
	return d
}

var (
	errResponseTimeout = errors.New("no response within the attempt's response timeout")
	errBodyStalled     = errors.New("response body stalled past the attempt's response timeout")
)

// NewHTTPClient returns the HTTP client backends use: connects time out after
// p.ConnectTimeout, and each attempt's response must begin within the response timeout that
// RetryPolicy.Do put in the request's context, counted after the request body is sent; a body
// that stalls that long mid-stream fails as a transport fault.
func NewHTTPClient(p *RetryPolicy) *http.Client {
	connect := 5 * time.Second
	if p != nil && p.ConnectTimeout > 0 {
		connect = p.ConnectTimeout
	}
	base := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   connect,
		ExpectContinueTimeout: time.Second,
		WriteBufferSize:       256 << 10,
		ReadBufferSize:        256 << 10,
	}
	return &http.Client{Transport: &timeoutTransport{base: base}}
}

type timeoutTransport struct{ base http.RoundTripper }

func (t *timeoutTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	d := ResponseTimeout(req.Context())
	if d <= 0 {
		return t.base.RoundTrip(req)
	}
	ctx, cancel := context.WithCancel(req.Context())
	var (
		mu       sync.Mutex
		timer    *time.Timer
		timedOut bool
	)
	fire := func() {
		mu.Lock()
		timedOut = true
		mu.Unlock()
		cancel()
	}
	trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) {
		mu.Lock()
		if timer == nil {
			timer = time.AfterFunc(d, fire)
		}
		mu.Unlock()
	}}
	resp, err := t.base.RoundTrip(req.WithContext(httptrace.WithClientTrace(ctx, trace)))
	mu.Lock()
	if timer != nil {
		timer.Stop()
	}
	late := timedOut
	mu.Unlock()
	if err != nil {
		cancel()
		if late && req.Context().Err() == nil {
			return nil, &net.OpError{Op: "read", Net: "tcp", Err: timeoutError{errResponseTimeout}}
		}
		return nil, err
	}
	resp.Body = newStallBody(resp.Body, d, cancel)
	return resp, nil
}

type timeoutError struct{ error }

func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }
func (e timeoutError) Unwrap() error { return e.error }

// stallBody fails a Read that waits longer than d for bytes.
type stallBody struct {
	body    io.ReadCloser
	d       time.Duration
	cancel  context.CancelFunc
	timer   *time.Timer
	mu      sync.Mutex
	stalled bool
}

func newStallBody(body io.ReadCloser, d time.Duration, cancel context.CancelFunc) *stallBody {
	s := &stallBody{body: body, d: d, cancel: cancel}
	s.timer = time.AfterFunc(d, s.fire)
	return s
}

func (s *stallBody) fire() {
	s.mu.Lock()
	s.stalled = true
	s.mu.Unlock()
	s.cancel()
}

func (s *stallBody) Read(p []byte) (int, error) {
	s.timer.Reset(s.d)
	n, err := s.body.Read(p)
	s.timer.Stop()
	if err != nil && err != io.EOF {
		s.mu.Lock()
		stalled := s.stalled
		s.mu.Unlock()
		if stalled {
			return n, errBodyStalled
		}
	}
	return n, err
}

func (s *stallBody) Close() error {
	s.timer.Stop()
	err := s.body.Close()
	s.cancel()
	return err
}

// IsTransport reports whether err is a transport fault: a network error, a reset, a timeout,
// a stalled or truncated body.
func IsTransport(err error) bool {
	return IsBodyFault(err)
}

// isNetError reports whether err came from the network: an operation on a socket, a timeout,
// an end of stream, or one of the network's errnos. Other errnos are not, although
// syscall.Errno satisfies net.Error: a local file that cannot be opened or read (ENOENT,
// EACCES, EIO) is the caller's fault to report, not a request to send again.
func isNetError(err error) bool {
	var oe *net.OpError
	if errors.As(err, &oe) {
		return true
	}
	if errors.Is(err, io.EOF) || errors.Is(err, errResponseTimeout) {
		return true
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		switch errno {
		case syscall.ECONNRESET, syscall.ECONNREFUSED, syscall.ECONNABORTED, syscall.EPIPE,
			syscall.ETIMEDOUT, syscall.ENETUNREACH, syscall.EHOSTUNREACH, syscall.ENETDOWN:
			return true
		}
		return false
	}
	var ne net.Error
	return errors.As(err, &ne)
}

// SetRootCAs makes a client from NewHTTPClient trust the certificates in pool instead of the
// system's (an SDK's custom CA bundle setting, say). It reports false for any other client.
func SetRootCAs(c *http.Client, pool *x509.CertPool) bool {
	tt, ok := c.Transport.(*timeoutTransport)
	if !ok {
		return false
	}
	base, ok := tt.base.(*http.Transport)
	if !ok {
		return false
	}
	if base.TLSClientConfig == nil {
		base.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	base.TLSClientConfig.RootCAs = pool
	return true
}

// RangeTotal parses the complete length from a Content-Range value ("bytes 0-99/1234"); ok is
// false when the value gives none ("bytes 0-99/*", or no value).
func RangeTotal(contentRange string) (n int64, ok bool) {
	_, total, found := strings.Cut(contentRange, "/")
	if !found || total == "*" {
		return 0, false
	}
	n, err := strconv.ParseInt(total, 10, 64)
	return n, err == nil
}
