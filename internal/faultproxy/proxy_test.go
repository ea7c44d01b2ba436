package faultproxy_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wharfdata/wharf/internal/faultproxy"
)

// backend is an httptest.Server that answers every request with "hello, world!" and records
// what reached it.
type backend struct {
	*httptest.Server
	mu   sync.Mutex
	seen []*http.Request
}

const payload = "hello, world!"

func newBackend(t *testing.T) *backend {
	t.Helper()
	b := &backend{}
	b.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r2 := r.Clone(r.Context())
		r2.Body = io.NopCloser(strings.NewReader(string(body)))
		b.mu.Lock()
		b.seen = append(b.seen, r2)
		b.mu.Unlock()
		w.Header().Set("ETag", `"abc"`)
		w.Header().Set("X-Echo-Host", r.Host)
		_, _ = io.WriteString(w, payload)
	}))
	t.Cleanup(b.Close)
	return b
}

func (b *backend) requests() []*http.Request {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]*http.Request(nil), b.seen...)
}

func get(t *testing.T, c *http.Client, url string) (*http.Response, string, error) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp, string(body), err
}

func TestForwardsUntouchedWithClientHost(t *testing.T) {
	b := newBackend(t)
	p := faultproxy.New(t, b.URL, faultproxy.Options{})
	req, _ := http.NewRequest(http.MethodPut, p.URL()+"/bucket/key?x-id=PutObject", strings.NewReader("data"))
	req.Header.Set("X-Amz-Meta-Color", "blue")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != payload || resp.Header.Get("ETag") != `"abc"` {
		t.Fatalf("got %d %q etag %q", resp.StatusCode, body, resp.Header.Get("ETag"))
	}
	if got := resp.Header.Get("X-Echo-Host"); got != p.Addr() {
		t.Errorf("backend saw Host %q, want the proxy's %q", got, p.Addr())
	}
	seen := b.requests()
	if len(seen) != 1 || seen[0].Method != "PUT" || seen[0].URL.RawQuery != "x-id=PutObject" ||
		seen[0].Header.Get("X-Amz-Meta-Color") != "blue" {
		t.Fatalf("backend saw %+v", seen)
	}
	if got, _ := io.ReadAll(seen[0].Body); string(got) != "data" {
		t.Errorf("backend got body %q", got)
	}
	recs := p.Requests()
	if len(recs) != 1 || recs[0].Method != "PUT" || recs[0].Path != "/bucket/key" ||
		recs[0].RawQuery != "x-id=PutObject" || recs[0].Fault != faultproxy.None ||
		recs[0].Header.Get("X-Amz-Meta-Color") != "blue" {
		t.Fatalf("records %+v", recs)
	}
}

func TestRuleFiltersAndOrder(t *testing.T) {
	b := newBackend(t)
	p := faultproxy.New(t, b.URL, faultproxy.Options{})
	byMethod := p.Inject(faultproxy.Rule{Method: "DELETE", Fault: faultproxy.Status, Status: 500})
	byPath := p.Inject(faultproxy.Rule{Path: "/b/part", Query: "partNumber=2", Fault: faultproxy.Status, Status: 429, Times: 1})
	byHeader := p.Inject(faultproxy.Rule{Header: "If-None-Match", Fault: faultproxy.Status, Status: 412})

	cases := []struct {
		method, path, header string
		want                 int
	}{
		{"GET", "/b/part?partNumber=1", "", 200},
		{"GET", "/b/part?partNumber=2", "", 429},
		{"GET", "/b/part?partNumber=2", "", 200}, // Times: 1 is spent
		{"PUT", "/b/k", "If-None-Match", 412},
		{"PUT", "/b/k", "", 200},
		{"DELETE", "/b/part?partNumber=2", "", 500}, // the first rule that matches wins
		{"DELETE", "/b/k", "", 500},
	}
	for _, c := range cases {
		req, _ := http.NewRequest(c.method, p.URL()+c.path, nil)
		if c.header != "" {
			req.Header.Set(c.header, "*")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s %s %s: status %d, want %d", c.method, c.path, c.header, resp.StatusCode, c.want)
		}
	}
	if byMethod.Fired() != 2 || byPath.Fired() != 1 || byHeader.Fired() != 1 {
		t.Errorf("fired %d %d %d, want 2 1 1", byMethod.Fired(), byPath.Fired(), byHeader.Fired())
	}
	byMethod.Remove()
	req, _ := http.NewRequest("DELETE", p.URL()+"/b/k", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("removed rule still fires: %d", resp.StatusCode)
	}
	if n := p.Count("GET", "/b/part"); n != 3 {
		t.Errorf("Count(GET, /b/part) = %d, want 3", n)
	}
	if n := p.Count("", ""); n != len(cases)+1 {
		t.Errorf("Count() = %d, want %d", n, len(cases)+1)
	}
	p.ClearRequests()
	if n := len(p.Requests()); n != 0 {
		t.Errorf("%d records after ClearRequests", n)
	}
}

func TestSkipThenTimes(t *testing.T) {
	b := newBackend(t)
	p := faultproxy.New(t, b.URL, faultproxy.Options{})
	in := p.Inject(faultproxy.Rule{Skip: 2, Times: 2, Fault: faultproxy.Status, Status: 503})
	var got []int
	for range 5 {
		resp, _, err := get(t, http.DefaultClient, p.URL()+"/k")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, resp.StatusCode)
	}
	want := []int{200, 200, 503, 503, 200}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("statuses %v, want %v", got, want)
		}
	}
	if in.Fired() != 2 || len(b.requests()) != 3 {
		t.Errorf("fired %d, backend saw %d; want 2 and 3", in.Fired(), len(b.requests()))
	}
	p.ClearRules()
	if resp, _, _ := get(t, http.DefaultClient, p.URL()+"/k"); resp.StatusCode != 200 {
		t.Errorf("after ClearRules: %d", resp.StatusCode)
	}
}

func TestCloseEndsStalledRequests(t *testing.T) {
	b := newBackend(t)
	p, err := faultproxy.Start(b.URL, faultproxy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p.Inject(faultproxy.Rule{Fault: faultproxy.Stall, Delay: time.Minute})
	errc := make(chan error, 1)
	go func() {
		_, _, err := get(t, http.DefaultClient, p.URL()+"/k")
		errc <- err
	}()
	for p.Count("", "") == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	start := time.Now()
	p.Close()
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Close took %v with a stalled request", d)
	}
	if err := <-errc; err == nil {
		t.Error("the stalled request succeeded after Close")
	}
	if len(b.requests()) != 0 {
		t.Error("a request stalled before forwarding reached the backend after Close")
	}
}

func TestStartRejectsBadBackend(t *testing.T) {
	for _, u := range []string{"", "127.0.0.1:9000", "https://127.0.0.1:9000", "http://"} {
		if p, err := faultproxy.Start(u, faultproxy.Options{}); err == nil {
			p.Close()
			t.Errorf("Start(%q) succeeded", u)
		}
	}
}
