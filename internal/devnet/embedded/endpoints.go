package embedded

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/segdiff/segdiff/internal/atomicfile"
	"github.com/segdiff/segdiff/internal/devnet"
	"github.com/segdiff/segdiff/internal/devnet/embedded/node"
	"github.com/segdiff/segdiff/internal/devnet/embedded/serve"
)

// ClientName is the client label every embedded node exports.
const ClientName = node.ClientName

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

// Serve starts serving res's per-node metrics on addr ("127.0.0.1:0"
// picks a port), after the simulation (outside the synctest bubble).
func Serve(addr string, res *Result) (*serve.Server, error) {
	ids := make([]string, len(res.Nodes))
	for i, n := range res.Nodes {
		ids[i] = n.ID
	}
	return serve.Start(addr, ids, res.Registries)
}

// EndpointsOf describes res with metrics under baseURL ("" leaves the URLs
// empty, for a run that is not served).
func EndpointsOf(res *Result, baseURL string) Endpoints {
	e := Endpoints{Backend: "embedded", Mode: res.Config.Mode, Timing: res.Timing, Config: res.Config}
	for _, n := range res.Nodes {
		node := devnet.Node{ID: n.ID, Roles: n.Roles, LinkClass: n.LinkClass, Region: n.Region, Client: ClientName}
		if baseURL != "" {
			node.MetricsURL = baseURL + serve.MetricsPath(n.ID)
		}
		e.Nodes = append(e.Nodes, node)
	}
	for _, s := range res.Slots {
		e.PTC = append(e.PTC, s.PTC)
		e.Slots = append(e.Slots, EndpointSlot{Slot: s.Slot, Warm: s.Warm})
	}
	return e
}

// WriteEndpoints writes e as JSON to path atomically (atomicfile.Write),
// so a reader polling for the file never sees half of it.
func WriteEndpoints(path string, e Endpoints) error {
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return fmt.Errorf("write endpoints: %w", err)
	}
	if err := atomicfile.Write(path, b, 0o644); err != nil {
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
