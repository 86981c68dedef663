// Package serve serves a finished embedded run's per-node metrics over
// HTTP, one listener for all nodes (/nodes/<id>/metrics), so that the
// suite scrapes a simulated node exactly as it would a client's metrics
// port.
package serve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Server serves registries by node id. It is safe for concurrent use.
type Server struct {
	srv *http.Server
	ln  net.Listener
}

// Start serves regs[i] at /nodes/<ids[i]>/metrics on addr ("127.0.0.1:0"
// picks a port). It returns once the listener is bound.
func Start(addr string, ids []string, regs []*prometheus.Registry) (*Server, error) {
	if len(regs) != len(ids) {
		return nil, fmt.Errorf("serve metrics: %d registries for %d nodes", len(regs), len(ids))
	}
	mux := http.NewServeMux()
	for i, reg := range regs {
		mux.Handle(MetricsPath(ids[i]), promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("serve metrics: %w", err)
	}
	s := &Server{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, ln: ln}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// MetricsPath is where node id's metrics are served.
func MetricsPath(id string) string { return "/nodes/" + id + "/metrics" }

// URL returns the base URL (http://host:port).
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Close stops serving.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("close metrics server: %w", err)
	}
	return nil
}
