package testenv_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/wharfdata/wharf/internal/testenv"
)

func TestFreeLoopbackPortIsListenable(t *testing.T) {
	p := testenv.FreeLoopbackPort(t)
	if p <= 0 || p > 65535 {
		t.Fatalf("port %d", p)
	}
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
	if err != nil {
		t.Fatalf("the free port %d cannot be listened on: %v", p, err)
	}
	ln.Close()
}

func TestFaultProxyFrontsTheServer(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "from backend")
	}))
	defer backend.Close()
	srv := testenv.S3Server{Name: "fake", Endpoint: backend.URL, AccessKey: "ak", SecretKey: "sk", Region: "us-east-1"}
	p, via := testenv.FaultProxy(t, srv)
	if via.Endpoint != p.URL() || via.Endpoint == srv.Endpoint {
		t.Fatalf("endpoint %q, proxy %q, server %q", via.Endpoint, p.URL(), srv.Endpoint)
	}
	if via.AccessKey != "ak" || via.SecretKey != "sk" || via.Name != "fake" || via.Region != "us-east-1" {
		t.Errorf("the proxied server lost fields: %+v", via)
	}
	resp, err := http.Get(via.Endpoint + "/b/k")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "from backend" || p.Count("GET", "/b/k") != 1 {
		t.Errorf("got %q, proxy counted %d", body, p.Count("GET", "/b/k"))
	}
}
