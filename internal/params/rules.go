package params

// Rule is one named check, run after the key walk over what it collected.
type Rule struct {
	// Name is Problem.Rule for what the rule reports.
	Name string
	// Source is the ethereum-package code (at EthereumPackageCommit) whose
	// failure the rule reports ahead of time, with that code's message; ""
	// for segdiff's own rules (our package's checks, or traps the package
	// does not catch).
	Source string
	check  func(r *run, f *facts)
}

// Rules is every rule, in the order they run. A rule reads facts only and
// reports through run.add; each has a test named after it in
// internal/params/rules_test.go, and internal/params/testdata/bad/ holds a
// file per trap that the real-package mode of internal/starlarktest also
// runs through the real package.
var Rules = []Rule{
	// network_params (rules_network.go)
	{Name: "network-name", Source: "input_parser.star: default_input_args, get_devnet_modified_images (joins that network)", check: (*run).networkName},
	{Name: "value-types", Source: "input_parser.star, the launchers: arithmetic, comparisons, truth tests and loops on the keys of TypeRules (types.go)", check: (*run).valueTypes},
	{Name: "builders-need-gloas-at-genesis", Source: "input_parser.star: parse_network_params", check: (*run).buildersGloas},
	{Name: "slot-duration", Source: "input_parser.star: parse_network_params", check: (*run).slotDuration},
	{Name: "nimbus-slot-time", Source: "input_parser.star: parse_network_params", check: (*run).nimbusSlotTime},
	{Name: "fulu-before-bpo", Source: "input_parser.star: input_parser", check: (*run).fuluBeforeBPO},
	{Name: "fork-order", check: (*run).forkOrder},
	{Name: "fulu-custody", Source: "input_parser.star: input_parser", check: (*run).fuluCustody},
	// participants (rules_participants.go)
	{Name: "client-types", Source: "src/{el,cl,vc}/*_launcher.star: Unsupported launcher", check: (*run).clientTypes},
	{Name: "prometheus-config", Source: "input_parser.star: participant prometheus_config", check: (*run).prometheusConfig},
	{Name: "log-levels", Source: "input_parser.star: get_client_log_level_or_default", check: (*run).logLevels},
	{Name: "client-refs", check: (*run).clientRefs},
	{Name: "client-modes", check: (*run).clientModes},
	// additional services and their parameters (rules_services.go)
	{Name: "grafana-after-prometheus", Source: "main.star: additional_services loop (prometheus_private_url)", check: (*run).grafanaAfterPrometheus},
	{Name: "mev-type", Source: "input_parser.star: Unsupported MEV type", check: (*run).mevType},
	{Name: "buildoor", Source: "input_parser.star: buildoor_params.instances", check: (*run).buildoor},
	{Name: "disruptoor-shaping", Source: "src/disruptoor/disruptoor_launcher.star: translate_shaping", check: (*run).disruptoorShaping},
	// our section and our per-participant keys (rules_segdiff.go)
	{Name: "segdiff", check: (*run).segdiff},
	{Name: "roles", check: (*run).roles},
}
