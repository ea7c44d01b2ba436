package faultproxy_test

import (
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wharfdata/wharf/internal/faultproxy"
)

func TestResetClosesWithoutAnswer(t *testing.T) {
	b := newBackend(t)
	p := faultproxy.New(t, b.URL, faultproxy.Options{})
	p.Inject(faultproxy.Rule{Method: "GET", Fault: faultproxy.Reset, Times: 1})
	_, _, err := get(t, http.DefaultClient, p.URL()+"/k")
	if err == nil {
		t.Fatal("GET through a Reset rule succeeded")
	}
	if !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, io.EOF) {
		t.Errorf("error %v is neither a reset nor EOF", err)
	}
	if len(b.requests()) != 0 {
		t.Error("a reset request reached the backend")
	}
	if resp, body, err := get(t, http.DefaultClient, p.URL()+"/k"); err != nil || body != payload {
		t.Fatalf("the next request: %v %v %q", resp, err, body)
	}
	recs := p.Requests()
	if len(recs) != 2 || recs[0].Fault != faultproxy.Reset || recs[1].Fault != faultproxy.None {
		t.Errorf("records %+v", recs)
	}
}

// Go's client resends an idempotent request once when a reused connection fails before any
// answer; the proxy closes every connection by default so that cannot hide a fault.
func TestResetSurfacesOnSecondRequestOfAClient(t *testing.T) {
	b := newBackend(t)
	p := faultproxy.New(t, b.URL, faultproxy.Options{})
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	if _, _, err := get(t, c, p.URL()+"/k"); err != nil {
		t.Fatal(err)
	}
	p.Inject(faultproxy.Rule{Fault: faultproxy.Reset, Times: 1})
	if _, _, err := get(t, c, p.URL()+"/k"); err == nil {
		t.Fatal("the client absorbed the reset")
	}
	if n := p.Count("GET", "/k"); n != 2 {
		t.Errorf("proxy saw %d GETs, want 2", n)
	}
}

func TestStatusAnswersS3Error(t *testing.T) {
	b := newBackend(t)
	p := faultproxy.New(t, b.URL, faultproxy.Options{})
	cases := []struct {
		rule faultproxy.Rule
		code string
		want int
	}{
		{faultproxy.Rule{Fault: faultproxy.Status}, "SlowDown", 503},
		{faultproxy.Rule{Fault: faultproxy.Status, Status: 429}, "SlowDown", 429},
		{faultproxy.Rule{Fault: faultproxy.Status, Status: 500}, "InternalError", 500},
		{faultproxy.Rule{Fault: faultproxy.Status, Status: 500, Code: "Custom", Message: "m"}, "Custom", 500},
	}
	for _, c := range cases {
		c.rule.Times = 1
		p.Inject(c.rule)
		req, _ := http.NewRequest("PUT", p.URL()+"/b/k", strings.NewReader(strings.Repeat("x", 1<<20)))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var e struct{ Code, Message, Resource string }
		if err := xml.Unmarshal(body, &e); err != nil {
			t.Fatalf("body %q: %v", body, err)
		}
		if resp.StatusCode != c.want || e.Code != c.code || e.Resource != "/b/k" || e.Message == "" ||
			resp.Header.Get("Content-Type") != "application/xml" {
			t.Errorf("rule %+v: %d %+v", c.rule, resp.StatusCode, e)
		}
	}
	if len(b.requests()) != 0 {
		t.Error("a request answered by a Status rule reached the backend")
	}
}

func TestStallDelaysThenForwards(t *testing.T) {
	b := newBackend(t)
	p := faultproxy.New(t, b.URL, faultproxy.Options{})
	p.Inject(faultproxy.Rule{Fault: faultproxy.Stall, Delay: 200 * time.Millisecond, Times: 1})
	start := time.Now()
	if _, body, err := get(t, http.DefaultClient, p.URL()+"/k"); err != nil || body != payload {
		t.Fatalf("%v %q", err, body)
	}
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Errorf("answered after %v, before the stall ended", d)
	}
	// A client that gives up first: the backend never sees the request.
	p.Inject(faultproxy.Rule{Fault: faultproxy.Stall, Delay: 5 * time.Second, Times: 1})
	c := &http.Client{Timeout: 100 * time.Millisecond}
	if _, _, err := get(t, c, p.URL()+"/k2"); err == nil {
		t.Fatal("a client with a 100 ms timeout got through a 5 s stall")
	}
	time.Sleep(100 * time.Millisecond)
	for _, r := range b.requests() {
		if r.URL.Path == "/k2" {
			t.Error("a request whose client gave up during the stall reached the backend")
		}
	}
}

func TestStallBodyPausesMidBody(t *testing.T) {
	b := newBackend(t)
	p := faultproxy.New(t, b.URL, faultproxy.Options{})
	p.Inject(faultproxy.Rule{Fault: faultproxy.StallBody, After: 5, Delay: 300 * time.Millisecond})
	start := time.Now()
	resp, err := http.Get(p.URL() + "/k")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if d := time.Since(start); d > 250*time.Millisecond {
		t.Errorf("headers took %v; the stall must come after them", d)
	}
	head := make([]byte, 5)
	if _, err := io.ReadFull(resp.Body, head); err != nil || string(head) != payload[:5] {
		t.Fatalf("first bytes %q %v", head, err)
	}
	rest, err := io.ReadAll(resp.Body)
	if err != nil || string(head)+string(rest) != payload {
		t.Fatalf("body %q%q %v", head, rest, err)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("whole body after %v, before the stall ended", d)
	}
}

func TestTruncateCutsBody(t *testing.T) {
	b := newBackend(t)
	p := faultproxy.New(t, b.URL, faultproxy.Options{})
	for _, after := range []int64{0, 5, 1000} {
		p.Inject(faultproxy.Rule{Fault: faultproxy.Truncate, After: after, Times: 1})
		resp, err := http.Get(p.URL() + "/k")
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("After %d: read error %v, want unexpected EOF", after, err)
		}
		if resp.ContentLength != int64(len(payload)) {
			t.Errorf("After %d: Content-Length %d, want the full %d", after, resp.ContentLength, len(payload))
		}
		want := min(after, int64(len(payload))-1)
		if int64(len(body)) != want || string(body) != payload[:want] {
			t.Errorf("After %d: got %q, want the first %d bytes", after, body, want)
		}
	}
}

func TestLostForwardsThenResets(t *testing.T) {
	b := newBackend(t)
	p := faultproxy.New(t, b.URL, faultproxy.Options{})
	p.Inject(faultproxy.Rule{Method: "PUT", Fault: faultproxy.Lost, Times: 1})
	req, _ := http.NewRequest("PUT", p.URL()+"/b/k", strings.NewReader("landed"))
	req.Header.Set("If-None-Match", "*")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("a lost answer arrived: %d", resp.StatusCode)
	}
	seen := b.requests()
	if len(seen) != 1 || seen[0].Method != "PUT" {
		t.Fatalf("backend saw %d requests, want the PUT", len(seen))
	}
	if body, _ := io.ReadAll(seen[0].Body); string(body) != "landed" {
		t.Errorf("backend got body %q", body)
	}
}

func TestCorruptFlipsOneByte(t *testing.T) {
	b := newBackend(t)
	p := faultproxy.New(t, b.URL, faultproxy.Options{})
	p.Inject(faultproxy.Rule{Fault: faultproxy.Corrupt, After: 3, Times: 1})
	resp, err := http.Get(p.URL() + "/k")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || len(body) != len(payload) {
		t.Fatalf("read %d bytes, %v; want all %d", len(body), err, len(payload))
	}
	want := []byte(payload)
	want[3] ^= 0xff
	if string(body) != string(want) {
		t.Errorf("body %q, want %q: byte 3 flipped, the rest as sent", body, want)
	}
}
