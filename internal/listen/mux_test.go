package listen

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestMuxServesTheThreeEndpoints(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "wharf_test_things_total", Help: "things"})
	reg.MustRegister(c)
	c.Add(3)
	healthy := true
	srv := httptest.NewServer(Mux(reg, func() any { return map[string]int{"files": 7} }, func() (int, string) {
		if healthy {
			return http.StatusOK, "ok: shipping"
		}
		return http.StatusServiceUnavailable, "fatal: the disk is full [WHARF_DISK_FULL]"
	}))
	defer srv.Close()
	get := func(path string) (int, string, string) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
	}
	if code, _, body := get("/metrics"); code != 200 || !strings.Contains(body, "wharf_test_things_total 3") {
		t.Errorf("/metrics: %d %q", code, body)
	}
	code, ct, body := get("/status")
	var st map[string]int
	if code != 200 || ct != "application/json" || json.Unmarshal([]byte(body), &st) != nil || st["files"] != 7 || !strings.Contains(body, "\n  ") {
		t.Errorf("/status: %d %s %q", code, ct, body)
	}
	if code, ct, body := get("/healthz"); code != 200 || !strings.HasPrefix(ct, "text/plain") || body != "ok: shipping\n" {
		t.Errorf("/healthz healthy: %d %s %q", code, ct, body)
	}
	healthy = false
	if code, _, body := get("/healthz"); code != 503 || body != "fatal: the disk is full [WHARF_DISK_FULL]\n" {
		t.Errorf("/healthz unhealthy: %d %q", code, body)
	}
	resp, err := http.Post(srv.URL+"/status", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /status: %d, want 405", resp.StatusCode)
	}
}
