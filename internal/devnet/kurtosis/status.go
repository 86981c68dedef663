package kurtosis

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
)

// Status describes a running enclave.
type Status struct {
	Enclave string
	UUID    string
	// Services are sorted by name.
	Services []ServiceStatus
	// Endpoints is the endpoints file's content, nil when there is none.
	Endpoints *Endpoints
}

// ServiceStatus is one service and its public ports.
type ServiceStatus struct {
	Name     string
	UUID     string
	PublicIP string
	// PublicPorts maps port id to host port.
	PublicPorts map[string]uint16
}

// GetStatus lists the enclave's services and reads its endpoints file.
// A missing enclave is an error wrapping ErrNoEnclave.
func GetStatus(ctx context.Context, params ...Parameter) (*Status, error) {
	p, err := parseAndCheckParameters(params...)
	if err != nil {
		return nil, fmt.Errorf("devnet status: %w", err)
	}
	kc, err := connect(ctx, p.connectTimeout)
	if err != nil {
		return nil, fmt.Errorf("devnet status: %w", err)
	}
	info, err := findEnclave(ctx, kc, p.enclave)
	if err != nil {
		return nil, fmt.Errorf("devnet status: %w", err)
	}
	ec, err := enclaveContext(ctx, kc, info)
	if err != nil {
		return nil, fmt.Errorf("devnet status: %w", err)
	}
	names, err := ec.GetServices()
	if err != nil {
		return nil, fmt.Errorf("devnet status: list services: %w", brief(err))
	}
	st := &Status{Enclave: p.enclave, UUID: info.GetEnclaveUuid()}
	if len(names) > 0 {
		ids := map[string]bool{}
		for n := range names {
			ids[string(n)] = true
		}
		scs, err := ec.GetServiceContexts(ids)
		if err != nil {
			return nil, fmt.Errorf("devnet status: inspect services: %w", brief(err))
		}
		for name, sc := range scs {
			ss := ServiceStatus{Name: string(name), UUID: string(sc.GetServiceUUID()), PublicIP: sc.GetMaybePublicIPAddress(), PublicPorts: map[string]uint16{}}
			for id, port := range sc.GetPublicPorts() {
				ss.PublicPorts[id] = port.GetNumber()
			}
			st.Services = append(st.Services, ss)
		}
		sort.Slice(st.Services, func(i, j int) bool { return st.Services[i].Name < st.Services[j].Name })
	}
	e, err := ReadEndpoints(EndpointsPath(p.endpointsDir, p.enclave))
	switch {
	case err == nil:
		st.Endpoints = e
	case errors.Is(err, os.ErrNotExist):
	default:
		return nil, fmt.Errorf("devnet status: %w", err)
	}
	return st, nil
}

// Print writes s as a human-readable table.
func (s *Status) Print(w io.Writer) {
	fmt.Fprintf(w, "enclave %s (%s): %d services\n", s.Enclave, s.UUID, len(s.Services))
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVICE\tPUBLIC PORTS")
	for _, svc := range s.Services {
		ids := make([]string, 0, len(svc.PublicPorts))
		for id := range svc.PublicPorts {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		ports := make([]string, len(ids))
		for i, id := range ids {
			ports[i] = fmt.Sprintf("%s=%s:%d", id, svc.PublicIP, svc.PublicPorts[id])
		}
		fmt.Fprintf(tw, "%s\t%s\n", svc.Name, strings.Join(ports, " "))
	}
	tw.Flush()
	if s.Endpoints == nil {
		fmt.Fprintln(w, "no endpoints file (run `segdiff devnet up` to write it)")
		return
	}
	e := s.Endpoints
	fmt.Fprintf(w, "\nmode %s, payload due %d bps, prometheus %s", e.Mode, e.PayloadDueBPS, e.PrometheusURL)
	if e.GrafanaURL != "" {
		fmt.Fprintf(w, ", grafana %s", e.GrafanaURL)
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tROLES\tLINK\tBEACON\tMETRICS")
	for _, n := range e.Nodes {
		roles := make([]string, len(n.Roles))
		for i, r := range n.Roles {
			roles[i] = string(r)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", n.ID, strings.Join(roles, ","), n.LinkClass, n.BeaconURL, n.MetricsURL)
	}
	tw.Flush()
}
