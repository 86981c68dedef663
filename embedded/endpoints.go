package embedded

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/segdiff/segdiff/devnet"
)

// Endpoints is the JSON descriptor a served simulation writes for the
// embedded backend (and anyone else): where each node's metrics are, the
// slot clock (virtual: genesis is on 2000-01-01) and the PTC's votes.
type Endpoints struct {
	Backend string            `json:"backend"`
	Mode    devnet.Mode       `json:"mode"`
	Nodes   []devnet.Node     `json:"nodes"`
	Timing  devnet.Timing     `json:"timing"`
	PTC     []devnet.PTCVotes `json:"ptc"`
	// Slots lists the payload slots, warm ones flagged.
	Slots []EndpointSlot `json:"slots"`
	// Config is the simulation's configuration.
	Config Config `json:"config"`
}

// EndpointSlot names a payload slot and whether it is warm.
type EndpointSlot struct {
	Slot uint64 `json:"slot"`
	Warm bool   `json:"warm"`
}

// Server serves every node's registry at /nodes/<id>/metrics on one
// listener, after the simulation (outside the synctest bubble), so the suite
// scrapes a simulated node exactly as it would a client's metrics port.
// Close stops it. It is safe for concurrent use.
type Server struct {
	srv *http.Server
	ln  net.Listener
	res *Result
}

// Serve starts serving res's registries on addr ("127.0.0.1:0" picks a
// port). It returns once the listener is bound.
func Serve(addr string, res *Result) (*Server, error) {
	if len(res.Registries) != len(res.Nodes) {
		return nil, fmt.Errorf("serve metrics: %d registries for %d nodes", len(res.Registries), len(res.Nodes))
	}
	mux := http.NewServeMux()
	for i, reg := range res.Registries {
		mux.Handle("/nodes/"+res.Nodes[i].ID+"/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("serve metrics: %w", err)
	}
	s := &Server{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, ln: ln, res: res}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// URL returns the base URL (http://host:port).
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Endpoints describes the served network.
func (s *Server) Endpoints() Endpoints {
	return EndpointsOf(s.res, s.URL())
}

// Close stops serving.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("close metrics server: %w", err)
	}
	return nil
}

// EndpointsOf describes res with metrics under baseURL ("" leaves the URLs
// empty, for a run that is not served).
func EndpointsOf(res *Result, baseURL string) Endpoints {
	e := Endpoints{Backend: "embedded", Mode: res.Config.Mode, Timing: res.Timing, Config: res.Config}
	for _, n := range res.Nodes {
		node := devnet.Node{ID: n.ID, Roles: n.Roles, LinkClass: n.LinkClass, Region: n.Region, Client: ClientName}
		if baseURL != "" {
			node.MetricsURL = baseURL + "/nodes/" + n.ID + "/metrics"
		}
		e.Nodes = append(e.Nodes, node)
	}
	for _, s := range res.Slots {
		e.PTC = append(e.PTC, s.PTC)
		e.Slots = append(e.Slots, EndpointSlot{Slot: s.Slot, Warm: s.Warm})
	}
	return e
}

// WriteEndpoints writes e as JSON to path atomically (write then rename),
// so a reader polling for the file never sees half of it.
func WriteEndpoints(path string, e Endpoints) error {
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return fmt.Errorf("write endpoints: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("write endpoints: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write endpoints: %w", err)
	}
	return nil
}

// ReadEndpoints reads a descriptor written by WriteEndpoints.
func ReadEndpoints(path string) (Endpoints, error) {
	var e Endpoints
	b, err := os.ReadFile(path)
	if err != nil {
		return e, fmt.Errorf("read endpoints: %w", err)
	}
	if err := json.Unmarshal(b, &e); err != nil {
		return e, fmt.Errorf("read endpoints %s: %w", path, err)
	}
	if len(e.Nodes) == 0 {
		return e, fmt.Errorf("read endpoints %s: no nodes", path)
	}
	return e, nil
}
