package faultproxy

import (
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// Options configure a proxy.
type Options struct {
	// AccessKey and SecretKey re-sign SigV4 requests whose signed conditional headers
	// StripConditions removed. Leave them empty for unsigned backends.
	AccessKey, SecretKey string
	// KeepAlive lets clients reuse connections (see the package documentation).
	KeepAlive bool
}

// Request is one request the proxy saw.
type Request struct {
	Method   string
	Path     string // decoded path
	RawQuery string
	Header   http.Header // as the client sent it, before any stripping
	Fault    Fault       // the fault applied; None when forwarded untouched
	Stripped bool        // conditional headers were removed before forwarding
	Time     time.Time
}

// Proxy is a fault-injecting reverse proxy on loopback. Its methods are safe for concurrent use.
type Proxy struct {
	target    *url.URL
	opts      Options
	ln        net.Listener
	srv       *http.Server
	transport *http.Transport
	done      chan struct{}
	closeOnce sync.Once
	handlers  sync.WaitGroup

	mu     sync.Mutex
	closed bool
	rules  []*Injection
	strip  bool
	log    []Request
}

// Start starts a proxy on 127.0.0.1:0 in front of backend (an http:// base URL such as
// "http://127.0.0.1:9000"). Close stops it.
func Start(backend string, opts Options) (*Proxy, error) {
	target, err := url.Parse(backend)
	if err != nil || target.Scheme != "http" || target.Host == "" {
		return nil, fmt.Errorf("faultproxy: backend %q is not an http://host:port URL", backend)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("faultproxy: listen: %w", err)
	}
	p := &Proxy{
		target: target,
		opts:   opts,
		ln:     ln,
		done:   make(chan struct{}),
		transport: &http.Transport{
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
			MaxIdleConnsPerHost: 64,
			IdleConnTimeout:     30 * time.Second,
			DisableCompression:  true,
		},
	}
	p.srv = &http.Server{
		Handler:           p,
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0), // a library does not print
	}
	p.srv.SetKeepAlivesEnabled(opts.KeepAlive)
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// New starts a proxy in front of backend for the test t and closes it when t ends; it fails
// t if the proxy cannot start.
func New(t testing.TB, backend string, opts Options) *Proxy {
	t.Helper()
	p, err := Start(backend, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// URL returns the proxy's base URL, http://127.0.0.1:PORT, to use as a client's endpoint.
func (p *Proxy) URL() string { return "http://" + p.ln.Addr().String() }

// Addr returns the proxy's listening address, 127.0.0.1:PORT.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Close stops the proxy: stalled requests end at once, open connections are closed, and Close
// returns once every request handler has returned.
func (p *Proxy) Close() {
	p.closeOnce.Do(func() {
		p.mu.Lock()
		p.closed = true // no handler starts after this, so Wait below is sound
		p.mu.Unlock()
		close(p.done)
		_ = p.srv.Close()
		p.handlers.Wait()
		p.transport.CloseIdleConnections()
	})
}

// Inject adds a rule and returns it, so the test can ask how often it fired or remove it.
func (p *Proxy) Inject(r Rule) *Injection {
	in := &Injection{rule: r}
	p.mu.Lock()
	p.rules = append(p.rules, in)
	p.mu.Unlock()
	return in
}

// ClearRules removes every rule.
func (p *Proxy) ClearRules() {
	p.mu.Lock()
	p.rules = nil
	p.mu.Unlock()
}

// StripConditions turns stripping of conditional headers on or off for every request.
func (p *Proxy) StripConditions(on bool) {
	p.mu.Lock()
	p.strip = on
	p.mu.Unlock()
}

// Requests returns a copy of every request recorded so far, oldest first.
func (p *Proxy) Requests() []Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Request(nil), p.log...)
}

// Count returns how many recorded requests had the method ("" for any) and a path containing
// pathSub.
func (p *Proxy) Count(method, pathSub string) int {
	n := 0
	for _, r := range p.Requests() {
		if (method == "" || strings.EqualFold(method, r.Method)) && strings.Contains(r.Path, pathSub) {
			n++
		}
	}
	return n
}

// ClearRequests forgets the recorded requests.
func (p *Proxy) ClearRequests() {
	p.mu.Lock()
	p.log = nil
	p.mu.Unlock()
}

// ServeHTTP records the request, picks the fault of the first matching rule and applies it.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		panic(http.ErrAbortHandler)
	}
	p.handlers.Add(1)
	p.mu.Unlock()
	defer p.handlers.Done()
	rule, strip := p.decide(r)
	fault := None
	if rule != nil {
		fault = rule.Fault
	}
	p.record(r, fault, strip)
	if strip {
		if err := p.stripConditions(r); err != nil {
			writeS3Error(w, r, http.StatusInternalServerError, "FaultProxyCannotResign", err.Error())
			return
		}
	}
	p.apply(w, r, rule)
}

func (p *Proxy) decide(r *http.Request) (*Rule, bool) {
	p.mu.Lock()
	rules, strip := p.rules, p.strip
	p.mu.Unlock()
	for _, in := range rules {
		if in.matches(r) && in.take() {
			ru := in.rule
			return &ru, strip
		}
	}
	return nil, strip
}

func (p *Proxy) record(r *http.Request, f Fault, strip bool) {
	rec := Request{
		Method:   r.Method,
		Path:     r.URL.Path,
		RawQuery: r.URL.RawQuery,
		Header:   r.Header.Clone(),
		Fault:    f,
		Stripped: strip && hasConditions(r.Header),
		Time:     time.Now(),
	}
	p.mu.Lock()
	p.log = append(p.log, rec)
	p.mu.Unlock()
}

// wait sleeps d, or less when the client goes away or the proxy closes; it reports whether
// the full wait passed.
func (p *Proxy) wait(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
	case <-p.done:
	}
	return false
}
