package kurtosis

// RunOutput is the part of kurtosis/main.star's return value this package
// reads (contract point 2): the Starlark struct arrives as JSON in
// RunFinishedEvent.SerializedOutput. Other fields of the value are ignored.
type RunOutput struct {
	Nodes []OutputNode `json:"segdiff_nodes"`
	// PrometheusService is the Prometheus service name ("segdiff-prometheus"),
	// port id "http".
	PrometheusService string `json:"prometheus_service"`
	// GrafanaService is the Grafana service name, port id "dashboards"; ""
	// when Grafana is disabled.
	GrafanaService string `json:"grafana_service"`
	// Mode is the diffusion mode the clients run.
	Mode string `json:"mode"`
	// SecondsPerSlot and SlotDurationMS are the network's slot duration;
	// SlotDurationMS (optional) wins when set.
	SecondsPerSlot int `json:"seconds_per_slot"`
	SlotDurationMS int `json:"slot_duration_ms,omitempty"`
	// PayloadDueBPS is PAYLOAD_DUE_BPS as configured; 0 = client default.
	PayloadDueBPS int `json:"payload_due_bps"`
	// LoadService is the transaction load's service ("segdiff-load"), ""
	// without segdiff.load.
	LoadService string `json:"load_service,omitempty"`
}

// OutputNode is one entry of segdiff_nodes.
type OutputNode struct {
	// ID is the CL service name, e.g. "cl-1-prysm-geth".
	ID        string `json:"id"`
	CLService string `json:"cl_service"`
	// ELService is "" for a participant without an EL.
	ELService string   `json:"el_service"`
	Client    string   `json:"client"`
	LinkClass string   `json:"link_class"`
	Roles     []string `json:"roles"`
	// DiffusionRole is how the node treats payload messages: its
	// participant's segdiff.role (relay, withholder, silent or mute); ""
	// from a package that predates roles, read as relay.
	DiffusionRole string `json:"diffusion_role,omitempty"`
	// ValidatorFirst and ValidatorCount are the genesis validator indices
	// the node's validator client holds, [first, first+count); absent from
	// a package that predates them.
	ValidatorFirst uint64 `json:"validator_first,omitempty"`
	ValidatorCount uint64 `json:"validator_count,omitempty"`
}
