package kurtosis

import (
	"time"

	"github.com/segdiff/segdiff/internal/devnet"
)

// EndpointsVersion is the format version written to and required from
// endpoints files.
const EndpointsVersion = 1

// Endpoints is the endpoints file `segdiff devnet up` writes to
// .devnet/<enclave>/endpoints.json (contract point 3) and the "kurtosis"
// backend reads. Every URL is PUBLIC: reachable from the machine that ran
// `up` (the host side of Kurtosis' port publishing).
//
//	{
//	  "version": 1,
//	  "enclave": "segdiff", "enclave_uuid": "…",
//	  "params_file": "network-params/segmented.yaml",
//	  "mode": "segmented", "seconds_per_slot": 12, "slot_duration_ms": 12000, "payload_due_bps": 5000,
//	  "nodes": [{"id": "cl-1-prysm-geth", "roles": ["node","proposer","builder"], "link_class": "home",
//	             "metrics_url": "http://127.0.0.1:32771/metrics", "beacon_url": "http://127.0.0.1:32770",
//	             "client": "prysm", "cl_service": "cl-1-prysm-geth", "el_service": "el-1-geth-prysm",
//	             "el_rpc_url": "http://127.0.0.1:32768", "el_metrics_url": "http://127.0.0.1:32769/debug/metrics/prometheus"}],
//	  "prometheus_url": "http://127.0.0.1:32780", "grafana_url": "http://127.0.0.1:32781",
//	  "written_at": "2026-11-30T04:00:00Z"
//	}
type Endpoints struct {
	Version     int    `json:"version"`
	Enclave     string `json:"enclave"`
	EnclaveUUID string `json:"enclave_uuid,omitempty"`
	// ParamsFile is the --params file the enclave was started with.
	ParamsFile     string      `json:"params_file,omitempty"`
	Mode           devnet.Mode `json:"mode"`
	SecondsPerSlot int         `json:"seconds_per_slot"`
	SlotDurationMS int         `json:"slot_duration_ms,omitempty"`
	PayloadDueBPS  int         `json:"payload_due_bps"`
	// Nodes are sorted by ID.
	Nodes         []EndpointNode `json:"nodes"`
	PrometheusURL string         `json:"prometheus_url"`
	// GrafanaURL is "" when Grafana is disabled.
	GrafanaURL string `json:"grafana_url,omitempty"`
	// LoadService is the transaction load's Kurtosis service (segdiff.load;
	// `kurtosis service logs <enclave> <name>` shows its per-block table),
	// "" without one.
	LoadService string    `json:"load_service,omitempty"`
	WrittenAt   time.Time `json:"written_at"`
}

// EndpointNode is a devnet.Node (its JSON fields inline) plus the Kurtosis
// service names and EL URLs.
type EndpointNode struct {
	devnet.Node
	CLService string `json:"cl_service"`
	ELService string `json:"el_service,omitempty"`
	// ELRPCURL is the EL JSON-RPC URL (port id "rpc"); "" without an EL.
	ELRPCURL string `json:"el_rpc_url,omitempty"`
	// ELMetricsURL is the EL's metrics base URL (port id "metrics"), without
	// a client-specific path; "" when not published.
	ELMetricsURL string `json:"el_metrics_url,omitempty"`
}
