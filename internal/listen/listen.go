package listen

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// Off is the address that serves nothing.
const Off = "off"

// Check returns an error naming addr unless it is Off, empty, or host:port with a loopback
// host (or any host when remote is true). example is a valid address for the message.
func Check(addr string, remote bool, example string) error {
	if addr == Off || addr == "" {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen %q: want host:port (%s) or %s", addr, example, Off)
	}
	if !remote && !Loopback(host) {
		return fmt.Errorf("listen %q: not a loopback address; /status and /metrics describe the job's data, so set listen_remote: true to serve them beyond this machine", addr)
	}
	return nil
}

// Loopback reports whether host is "localhost" or a loopback IP address.
func Loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsLoopback()
}

// Server is a running HTTP server. Its zero value (from Serve with Off) serves nothing.
type Server struct {
	// Addr is the bound address (with the port the system chose for port 0); nil when off.
	Addr net.Addr
	srv  *http.Server
	done chan struct{}
}

// Serve binds addr and serves h in the background; with Off or "" it serves nothing. A
// failure to bind says why; log receives a failure of the server after the bind.
func Serve(addr string, h http.Handler, log *slog.Logger) (*Server, error) {
	if addr == Off || addr == "" {
		return &Server{}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, explain(err)
	}
	s := &Server{Addr: ln.Addr(), srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second},
		done: make(chan struct{})}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("serving the HTTP endpoints", "listen", addr, "error", err)
		}
	}()
	return s, nil
}

// Stop shuts the server down, waiting up to two seconds for requests under way, and returns
// when it no longer serves.
func (s *Server) Stop() {
	if s.srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = s.srv.Shutdown(ctx)
	<-s.done
}

// explain keeps the system's answer to a bind and adds what to do about it.
func explain(err error) error {
	why := "the address cannot be bound here"
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		why = "another process listens on that port; give another address (--listen, or listen: in the config file), or off"
	case errors.Is(err, syscall.EACCES):
		why = "this process may not bind that port (below 1024?); give another address (--listen), or off"
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		why = "the address is not one of this machine's; give another (--listen), or off"
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		err = oe.Err // its text repeats "listen tcp ADDR"
	}
	return fmt.Errorf("%w: %s", err, why)
}
