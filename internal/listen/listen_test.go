package listen

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"errors"
)

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		addr   string
		remote bool
		want   string // "" for accepted
	}{
		{"off", false, ""},
		{"", false, ""},
		{"127.0.0.1:9464", false, ""},
		{"[::1]:9464", false, ""},
		{"localhost:0", false, ""},
		{"0.0.0.0:9464", false, "not a loopback address"},
		{"10.1.2.3:9464", false, "not a loopback address"},
		{"0.0.0.0:9464", true, ""},
		{"127.0.0.1", false, "want host:port (127.0.0.1:9999) or off"},
	} {
		err := Check(c.addr, c.remote, "127.0.0.1:9999")
		switch {
		case c.want == "" && err != nil:
			t.Errorf("Check(%q, %v) = %v, want nil", c.addr, c.remote, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("Check(%q, %v) = %v, want one saying %q", c.addr, c.remote, err, c.want)
		case c.want != "" && !strings.Contains(err.Error(), c.addr):
			t.Errorf("Check(%q) = %v: does not name the address", c.addr, err)
		}
	}
}

func TestServeAndStop(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	s, err := Serve("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "ok")
	}), log)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + s.Addr.String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "ok" {
		t.Fatalf("served %q, want ok", b)
	}

	// The port is taken: the second bind says so, with the system's error kept.
	_, err = Serve(s.Addr.String(), http.NotFoundHandler(), log)
	if !errors.Is(err, syscall.EADDRINUSE) || !strings.Contains(err.Error(), "another process listens on that port") {
		t.Fatalf("second bind: %v, want EADDRINUSE explained", err)
	}

	s.Stop()
	if c, err := net.Dial("tcp", s.Addr.String()); err == nil {
		c.Close()
		t.Fatalf("still accepting connections on %s after Stop", s.Addr)
	}

	off, err := Serve(Off, nil, log)
	if err != nil || off.Addr != nil {
		t.Fatalf("Serve(off) = %v, %v; want nothing served", off, err)
	}
	off.Stop()
}
