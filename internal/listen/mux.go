package listen

import (
	"encoding/json"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Mux returns the handler of a job's three endpoints: GET /metrics, the Prometheus
// registry reg; GET /status, status() as indented JSON; GET /healthz, the code and the line
// health() returns, as plain text. Each job keeps what its status and health mean; the
// endpoints read the same everywhere.
func Mux(reg *prometheus.Registry, status func() any, health func() (code int, line string)) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(status())
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		code, line := health()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(code)
		_, _ = w.Write([]byte(line + "\n"))
	})
	return mux
}
