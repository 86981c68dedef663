package kurtosis

import (
	"fmt"
	"net"
	"slices"
	"sort"
	"strconv"

	"github.com/kurtosis-tech/kurtosis/api/golang/core/lib/enclaves"
	"github.com/kurtosis-tech/kurtosis/api/golang/core/lib/services"

	"github.com/segdiff/segdiff/internal/devnet"
)

// Port ids, the same constants as kurtosis/src/package_io/constants.star
// (ethereum-package's ids for CL and EL).
const (
	PortCLHTTP         = "http"
	PortCLMetrics      = "metrics"
	PortELRPC          = "rpc"
	PortELMetrics      = "metrics"
	PortPrometheusHTTP = "http"
	PortGrafanaHTTP    = "dashboards"
)

// serviceLookup is the slice of *enclaves.EnclaveContext discovery needs.
type serviceLookup interface {
	GetServiceContext(serviceIdentifier string) (*services.ServiceContext, error)
}

var _ serviceLookup = (*enclaves.EnclaveContext)(nil)

// discover resolves every service the run output names to its public URLs.
func discover(ec serviceLookup, enclave string, out *RunOutput) (*Endpoints, error) {
	e := &Endpoints{
		Version:        EndpointsVersion,
		Enclave:        enclave,
		Mode:           devnet.Mode(out.Mode),
		SecondsPerSlot: out.SecondsPerSlot,
		SlotDurationMS: out.SlotDurationMS,
		PayloadDueBPS:  out.PayloadDueBPS,
	}
	for _, n := range out.Nodes {
		cl, err := publicBase(ec, n.CLService, PortCLHTTP, PortCLMetrics)
		if err != nil {
			return nil, fmt.Errorf("discover node %s: %w", n.ID, err)
		}
		node := EndpointNode{
			Node: devnet.Node{
				ID:         n.ID,
				LinkClass:  devnet.LinkClass(n.LinkClass),
				Client:     n.Client,
				BeaconURL:  cl[PortCLHTTP],
				MetricsURL: cl[PortCLMetrics] + "/metrics",
				Validators: devnet.ValidatorRange{First: n.ValidatorFirst, Count: n.ValidatorCount},
			},
			CLService: n.CLService,
			ELService: n.ELService,
		}
		for _, r := range n.Roles {
			node.Roles = append(node.Roles, devnet.Role(r))
		}
		// An adversarial diffusion role joins the node's roles, so that the
		// suite's verdicts cover honest nodes only, as on the embedded devnet.
		if r := devnet.Role(n.DiffusionRole); r.Adversarial() && !slices.Contains(node.Roles, r) {
			node.Roles = append(node.Roles, r)
		}
		if n.ELService != "" {
			el, err := publicBase(ec, n.ELService, PortELRPC)
			if err != nil {
				return nil, fmt.Errorf("discover node %s: %w", n.ID, err)
			}
			node.ELRPCURL = el[PortELRPC]
			node.ELMetricsURL = el[PortELMetrics] // optional: "" when not published
		}
		e.Nodes = append(e.Nodes, node)
	}
	sort.Slice(e.Nodes, func(i, j int) bool { return e.Nodes[i].ID < e.Nodes[j].ID })
	prom, err := publicBase(ec, out.PrometheusService, PortPrometheusHTTP)
	if err != nil {
		return nil, fmt.Errorf("discover prometheus: %w", err)
	}
	e.PrometheusURL = prom[PortPrometheusHTTP]
	if out.GrafanaService != "" {
		g, err := publicBase(ec, out.GrafanaService, PortGrafanaHTTP)
		if err != nil {
			return nil, fmt.Errorf("discover grafana: %w", err)
		}
		e.GrafanaURL = g[PortGrafanaHTTP]
	}
	if out.LoadService != "" {
		// No ports: the load only sends; it must exist, though.
		if _, err := ec.GetServiceContext(out.LoadService); err != nil {
			return nil, fmt.Errorf("discover load service %q: %w", out.LoadService, brief(err))
		}
		e.LoadService = out.LoadService
	}
	return e, nil
}

// publicBase returns http://<public ip>:<public port> for every public port
// of service, requiring the ports named in required.
func publicBase(ec serviceLookup, service string, required ...string) (map[string]string, error) {
	sc, err := ec.GetServiceContext(service)
	if err != nil {
		return nil, fmt.Errorf("service %q: %w", service, brief(err))
	}
	ip := sc.GetMaybePublicIPAddress()
	ports := sc.GetPublicPorts()
	if ip == "" || len(ports) == 0 {
		return nil, fmt.Errorf("service %q has no public address (on Kubernetes run `kurtosis gateway`)", service)
	}
	out := map[string]string{}
	for id, p := range ports {
		out[id] = "http://" + net.JoinHostPort(ip, strconv.Itoa(int(p.GetNumber())))
	}
	for _, id := range required {
		if _, ok := out[id]; !ok {
			return nil, fmt.Errorf("service %q has no public port %q (has %v)", service, id, sortedKeys(out))
		}
	}
	return out, nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
