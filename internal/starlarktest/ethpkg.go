package starlarktest

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/segdiff/segdiff/internal/params"
)

// EthereumPackageLocator is the pinned import kurtosis/main.star must use.
const EthereumPackageLocator = "github.com/ethpandaops/ethereum-package/main.star@" + params.EthereumPackageCommit

// EthereumPackageStub stands in for ethereum-package's main.star at the
// pinned commit: run(plan, args) applies the documented input checks (key
// tables from package params, builder/Gloas, grafana after prometheus,
// disruptoor needs Docker and valid shaping rules), expands participants,
// records their CL/EL services with ethereum-package's port ids and metrics
// ports (a CL service with the participant's cl_image, and its
// cl_extra_params as the command), and returns the documented struct (all_participants with
// el_context/cl_context, network_params, network_id, ...).
func EthereumPackageStub(r *Runtime) starlark.StringDict {
	return starlark.StringDict{"run": starlark.NewBuiltin("run", r.ethereumPackageRun)}
}

// clMetrics / elMetrics: metrics port and path per client
// (ethereum-package reference §4.2); beacon HTTP port per CL.
var (
	clMetrics = map[string]struct {
		port int
		path string
	}{
		"lighthouse": {5054, "/metrics"}, "teku": {8008, "/metrics"}, "nimbus": {8008, "/metrics"},
		"lodestar": {8008, "/metrics"}, "grandine": {8008, "/metrics"}, "consensoor": {8008, "/metrics"},
		"prysm": {8080, "/metrics"}, "caplin": {6060, "/debug/metrics/prometheus"},
	}
	clHTTPPort = map[string]int{"prysm": 3500, "consensoor": 5052, "caplin": 5555}
	elMetrics  = map[string]string{
		"geth": "/debug/metrics/prometheus", "erigon": "/metrics", "nethermind": "/metrics", "besu": "/metrics",
		"reth": "/metrics", "nimbus": "/metrics", "ethrex": "/metrics",
	}
)

// stubParticipant is one expanded participant: its client types, and the
// CL's image and cl_extra_params, which the stand-in records on the CL
// service (Image; Cmd holds the extra parameters, where ethereum-package's
// launchers append them to the client's command).
type stubParticipant struct {
	cl, el        string
	clImage       string
	clExtraParams []string
}

func (r *Runtime) ethereumPackageRun(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var plan, argsV starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "plan", &plan, "args?", &argsV); err != nil {
		return nil, err
	}
	in := map[string]any{}
	if argsV != nil {
		g, err := toGo(th, argsV)
		if err != nil {
			return nil, err
		}
		m, ok := g.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("ethereum-package: args must be a dict")
		}
		in = m
	}
	r.plan.EthereumPackageArgs = in
	if err := stubSanityCheck(in); err != nil {
		return nil, err
	}
	network := mapOf(in["network_params"])
	np, err := stubNetworkParams(network)
	if err != nil {
		return nil, err
	}
	parts := stubExpand(in)
	services := stringsOf(in["additional_services"])
	if i, j := slices.Index(services, "grafana"), slices.Index(services, "prometheus"); i >= 0 && (j < 0 || j > i) {
		return nil, errors.New("ethereum-package: grafana needs prometheus listed before it (prometheus_private_url unset)")
	}
	width := len(strconv.Itoa(len(parts)))
	var all []starlark.Value
	for i, p := range parts {
		v, err := r.stubParticipant(th, i+1, width, p)
		if err != nil {
			return nil, err
		}
		all = append(all, v)
	}
	for _, svc := range services {
		if err := r.stubAdditionalService(svc, in, len(parts)); err != nil {
			return nil, err
		}
	}
	npv, err := fromGo(th, np)
	if err != nil {
		return nil, err
	}
	npStruct, err := dictToStruct(npv)
	if err != nil {
		return nil, err
	}
	return starlarkstruct.FromStringDict(starlarkstruct.Default, starlark.StringDict{
		"all_participants":        starlark.NewList(all),
		"pre_funded_accounts":     starlark.NewList(nil),
		"network_params":          npStruct,
		"network_id":              starlark.String(fmt.Sprint(np["network_id"])),
		"final_genesis_timestamp": starlark.String("{{kurtosis:genesis.timestamp}}"),
		"genesis_validators_root": starlark.String("{{kurtosis:genesis.validators_root}}"),
	}), nil
}

// stubSanityCheck mirrors sanity_check.star's unknown-key failures.
func stubSanityCheck(in map[string]any) error {
	top := params.TopLevelKeys()
	for k := range in {
		if !slices.Contains(top, k) {
			return fmt.Errorf("ethereum-package: Invalid parameter %s, allowed fields %v", k, top)
		}
	}
	for _, p := range listOf(in["participants"]) {
		for k := range mapOf(p) {
			if !slices.Contains(params.ParticipantKeys, k) {
				return fmt.Errorf("ethereum-package: Invalid parameter %s for participants. Allowed fields: %v", k, params.ParticipantKeys)
			}
		}
	}
	for block, keys := range params.BlockKeys {
		for k := range mapOf(in[block]) {
			if !slices.Contains(keys, k) {
				return fmt.Errorf("ethereum-package: Invalid parameter %s for %s. Allowed fields: %v", k, block, keys)
			}
		}
	}
	for _, s := range stringsOf(in["additional_services"]) {
		if !slices.Contains(params.AdditionalServices, s) {
			return fmt.Errorf("ethereum-package: Invalid additional_services %s, allowed fields: %v", s, params.AdditionalServices)
		}
	}
	return nil
}

func stubNetworkParams(user map[string]any) (map[string]any, error) {
	np := map[string]any{
		"network": "kurtosis", "network_id": "3151908", "preset": "mainnet",
		"seconds_per_slot": json.Number("12"), "slot_duration_ms": json.Number("12000"),
		"num_validator_keys_per_node": json.Number("128"), "payload_due_bps": json.Number("5000"),
		"payload_attestation_due_bps": json.Number("7500"), "gloas_fork_epoch": json.Number("18446744073709551615"),
		"fulu_fork_epoch": json.Number("0"), "builder_count": json.Number("0"),
	}
	if user["preset"] == "minimal" {
		np["seconds_per_slot"], np["slot_duration_ms"] = json.Number("6"), json.Number("6000")
	}
	for k, v := range user {
		np[k] = v
	}
	_, sps := user["seconds_per_slot"]
	_, sdm := user["slot_duration_ms"]
	switch {
	case sps && !sdm:
		s, _ := np["seconds_per_slot"].(json.Number).Int64()
		np["slot_duration_ms"] = json.Number(strconv.FormatInt(s*1000, 10))
	case sdm && !sps:
		ms, _ := np["slot_duration_ms"].(json.Number).Int64()
		np["seconds_per_slot"] = json.Number(strconv.FormatInt(ms/1000, 10))
	case sps && sdm:
		s, _ := np["seconds_per_slot"].(json.Number).Int64()
		ms, _ := np["slot_duration_ms"].(json.Number).Int64()
		if s*1000 != ms {
			return nil, fmt.Errorf("seconds_per_slot (%d) and slot_duration_ms (%d) disagree", s, ms)
		}
	}
	if n, _ := np["builder_count"].(json.Number).Int64(); n > 0 && np["gloas_fork_epoch"].(json.Number).String() != "0" {
		return nil, errors.New("builder_count > 0 requires gloas_fork_epoch == 0")
	}
	return np, nil
}

// stubExpand expands participants as input_parser.parse_network_params
// does at the pinned commit: participants_matrix adds one merged entry (el,
// then cl, vc, remote_signer keys) per el x cl x vc x remote_signer x count
// combination, where absent el or cl lists yield none and absent vc or
// remote_signer lists one empty entry; they follow participants[]; every
// entry is then repeated its own count times. With neither participants nor
// participants_matrix there is one default participant.
func stubExpand(in map[string]any) []stubParticipant {
	ps, given := in["participants"]
	mx, hasMatrix := in["participants_matrix"]
	list := append([]any{}, listOf(ps)...)
	if !given && !hasMatrix {
		list = []any{map[string]any{}}
	}
	if hasMatrix {
		list = append(list, stubMatrix(mapOf(mx))...)
	}
	var out []stubParticipant
	for _, p := range list {
		m := mapOf(p)
		el := strOf(m["el_type"], "geth")
		if v, present := m["el_type"]; present && v == nil {
			el = "none" // el_type: null launches a CL-only participant
		}
		for range intOf(m["count"], 1) {
			out = append(out, stubParticipant{cl: strOf(m["cl_type"], "lighthouse"), el: el,
				clImage: strOf(m["cl_image"], ""), clExtraParams: stringsOf(m["cl_extra_params"])})
		}
	}
	return out
}

// stubMatrix returns the merged participants_matrix entries, before count
// expansion.
func stubMatrix(mx map[string]any) []any {
	vcs, signers := orOne(listOf(mx["vc"])), orOne(listOf(mx["remote_signer"]))
	var out []any
	for _, el := range listOf(mx["el"]) {
		for _, cl := range listOf(mx["cl"]) {
			for _, vc := range vcs {
				for _, signer := range signers {
					for range intOf(mx["count"], 1) {
						merged := map[string]any{}
						for _, part := range []any{el, cl, vc, signer} {
							maps.Copy(merged, mapOf(part))
						}
						out = append(out, merged)
					}
				}
			}
		}
	}
	return out
}

func (r *Runtime) stubParticipant(th *starlark.Thread, idx, width int, p stubParticipant) (starlark.Value, error) {
	cm, ok := clMetrics[p.cl]
	if !ok {
		return nil, fmt.Errorf("ethereum-package: Unsupported launcher '%s', need one of %v", p.cl, params.CLTypes)
	}
	id := fmt.Sprintf("%0*d", width, idx)
	noEL := p.el == "" || strings.EqualFold(p.el, "none")
	clName := fmt.Sprintf("cl-%s-%s-%s", id, p.cl, p.el)
	if noEL {
		clName = fmt.Sprintf("cl-%s-%s", id, p.cl)
	}
	httpPort := clHTTPPort[p.cl]
	if httpPort == 0 {
		httpPort = 4000
	}
	image := p.clImage
	if image == "" {
		image = "stub/" + p.cl
	}
	if _, err := r.registerService(&Service{Name: clName, Image: image, Cmd: p.clExtraParams, AddedBy: "ethereum-package", Ports: map[string]Port{
		"http":          {httpPort, "TCP", "http"},
		"metrics":       {cm.port, "TCP", "http"},
		"tcp-discovery": {9000, "TCP", ""},
		"udp-discovery": {9000, "UDP", ""},
	}}); err != nil {
		return nil, err
	}
	clMetricsInfo, err := fromGo(th, []any{map[string]any{"name": clName, "path": cm.path, "url": fmt.Sprintf("%s:%d", clName, cm.port), "config": map[string]any{}}})
	if err != nil {
		return nil, err
	}
	cl := starlarkstruct.FromStringDict(starlarkstruct.Default, starlark.StringDict{
		"client_name":           starlark.String(p.cl),
		"beacon_service_name":   starlark.String(clName),
		"beacon_http_url":       starlark.String(fmt.Sprintf("http://%s:%d", clName, httpPort)),
		"http_port":             starlark.MakeInt(httpPort),
		"ip_addr":               starlark.String(clName),
		"ip_address":            starlark.String(fmt.Sprintf("{{kurtosis:%s.ip_address}}", clName)),
		"cl_nodes_metrics_info": clMetricsInfo,
		"supernode":             starlark.False,
	})
	var el starlark.Value = starlark.None
	if !noEL {
		path, known := elMetrics[p.el]
		if !known && p.el != "ethereumjs" {
			return nil, fmt.Errorf("ethereum-package: Unsupported launcher '%s', need one of %v", p.el, params.ELTypes)
		}
		elName := fmt.Sprintf("el-%s-%s-%s", id, p.el, p.cl)
		ports := map[string]Port{"rpc": {8545, "TCP", "http"}, "ws": {8546, "TCP", ""}, "engine-rpc": {8551, "TCP", ""}}
		var infos []any
		if known {
			ports["metrics"] = Port{9001, "TCP", "http"}
			infos = append(infos, map[string]any{"name": elName, "path": path, "url": elName + ":9001", "config": map[string]any{}})
		}
		if _, err := r.registerService(&Service{Name: elName, Image: "stub/" + p.el, Ports: ports, AddedBy: "ethereum-package"}); err != nil {
			return nil, err
		}
		elInfo, err := fromGo(th, infos)
		if err != nil {
			return nil, err
		}
		if !known {
			elInfo = starlark.None // ethereumjs: metrics_info None
		}
		el = starlarkstruct.FromStringDict(starlarkstruct.Default, starlark.StringDict{
			"client_name":     starlark.String(p.el),
			"service_name":    starlark.String(elName),
			"rpc_http_url":    starlark.String(fmt.Sprintf("http://%s:8545", elName)),
			"el_metrics_info": elInfo,
			"ip_addr":         starlark.String(elName),
		})
	}
	return starlarkstruct.FromStringDict(starlarkstruct.Default, starlark.StringDict{
		"el_type":    starlark.String(p.el),
		"cl_type":    starlark.String(p.cl),
		"vc_type":    starlark.String(p.cl),
		"el_context": el,
		"cl_context": cl,
		"vc_context": starlark.None,
	}), nil
}

// stubAdditionalService records the fixed-name services the package would
// add; disruptoor is validated like disruptoor_launcher.star does.
func (r *Runtime) stubAdditionalService(name string, in map[string]any, participants int) error {
	s := &Service{Name: name, Image: "stub/" + name, AddedBy: "ethereum-package", Ports: map[string]Port{"http": {8080, "TCP", "http"}}}
	switch name {
	case "disruptoor":
		if r.clusterType != "docker" {
			return fmt.Errorf("disruptoor requires the docker backend, got %s", r.clusterType)
		}
		shaping := mapOf(in["disruptoor_params"])["shaping"]
		if err := stubCheckShaping(shaping, participants); err != nil {
			return err
		}
		s.Privileged = true
		s.Ports = map[string]Port{"http": {7700, "TCP", "http"}}
		s.Cmd = []string{"--addr=:7700"}
		if rules := listOf(shaping); len(rules) > 0 {
			// disruptoor_launcher.star renders the native state as
			// disruptoor-config/config.json, mounted at /config.
			state, err := json.MarshalIndent(map[string]any{"shaping": stubNativeShaping(rules)}, "", "  ")
			if err != nil {
				return err
			}
			art, err := r.newArtifact(starlark.String("disruptoor-config"))
			if err != nil {
				return err
			}
			art.Files["config.json"] = string(state)
			s.Files = map[string]string{"/config": art.Name}
			s.Cmd = append(s.Cmd, "--config=/config/config.json")
		}
	case "buildoor":
		return nil // per-instance names; not needed by the tests
	}
	_, err := r.registerService(s)
	return err
}

// stubComponentClientType is disruptoor_launcher.star's component to
// client-type label (constants.star CLIENT_TYPES).
var stubComponentClientType = map[string]string{"el": "execution", "cl": "beacon", "vc": "validator"}

// stubNativeShaping translates checked shaping rules as translate_shaping
// does: a target selector on the node-index and client-type labels, the
// include_control scope, and the shaping values passed through.
func stubNativeShaping(rules []any) []any {
	var out []any
	for i, rv := range rules {
		rule := mapOf(rv)
		name := strOf(rule["name"], fmt.Sprintf("shaping-%d", i+1))
		target := map[string]any{}
		if ps, ok := rule["participants"].([]any); ok {
			target["node-index"] = ps
		}
		components := stringsOf(rule["components"])
		if len(components) == 0 {
			components = []string{"el", "cl"}
		}
		var types []any
		for _, c := range components {
			types = append(types, stubComponentClientType[c])
		}
		target["client-type"] = types
		native := map[string]any{"name": name, "target": target, "scope": []any{"include_control"}}
		if scope, ok := rule["scope"]; ok {
			native["scope"] = scope
		}
		for _, key := range []string{"direction", "delay", "jitter", "loss", "bandwidth"} {
			if v, ok := rule[key]; ok {
				native[key] = v
			}
		}
		out = append(out, native)
	}
	return out
}

// stubCheckShaping applies disruptoor_launcher.star's rules to the shaping
// list, plus disruptoor's "one rule per container" and its state's types
// (internal/state/state.go: delay, jitter, loss and bandwidth are strings,
// which the launcher passes through unchecked).
func stubCheckShaping(v any, participants int) error {
	if v == nil {
		return nil
	}
	rules, ok := v.([]any)
	if !ok {
		return errors.New("disruptoor_params.shaping must be a list")
	}
	shaped := map[string]string{}
	for i, rv := range rules {
		path := fmt.Sprintf("disruptoor_params.shaping[%d]", i)
		rule, ok := rv.(map[string]any)
		if !ok {
			return fmt.Errorf("%s must be a map", path)
		}
		_, delay := rule["delay"]
		_, loss := rule["loss"]
		_, bw := rule["bandwidth"]
		if !delay && !loss && !bw {
			return fmt.Errorf("%s must define at least one of delay, loss, or bandwidth", path)
		}
		if _, j := rule["jitter"]; j && !delay {
			return fmt.Errorf("%s.jitter requires delay to be set", path)
		}
		for _, key := range []string{"delay", "jitter", "loss", "bandwidth"} {
			if v, ok := rule[key]; ok {
				if _, isString := v.(string); !isString {
					return fmt.Errorf("disruptoor: shaping %q: %s must be a string (disruptoor's state decodes it as one), got %v", rule["name"], key, v)
				}
			}
		}
		if _, scope := rule["scope"]; !scope && rule["include_control"] != true {
			return fmt.Errorf("%s.include_control must be true because disruptoor v0 shaping currently requires control traffic acknowledgement", path)
		}
		components := stringsOf(rule["components"])
		if len(components) == 0 {
			components = []string{"el", "cl"}
		}
		var targets []int
		switch p := rule["participants"].(type) {
		case string:
			if p != "all" {
				return fmt.Errorf("%s.participants must be a list or \"all\"", path)
			}
			for n := 1; n <= participants; n++ {
				targets = append(targets, n)
			}
		case []any:
			for _, x := range p {
				n := intOf(x, 0)
				if n < 1 || n > participants {
					return fmt.Errorf("%s.participants: %v matches no container (1-based, %d participants)", path, x, participants)
				}
				targets = append(targets, n)
			}
		default:
			return fmt.Errorf("%s must define participants, labels, selector, or target", path)
		}
		for _, n := range targets {
			for _, c := range components {
				key := fmt.Sprintf("%d/%s", n, c)
				if prev, dup := shaped[key]; dup {
					return fmt.Errorf("shaping %q: container %s already shaped by rule %q", rule["name"], key, prev)
				}
				shaped[key] = fmt.Sprint(rule["name"])
			}
		}
	}
	return nil
}

func dictToStruct(v starlark.Value) (*starlarkstruct.Struct, error) {
	d, ok := v.(*starlark.Dict)
	if !ok {
		return nil, fmt.Errorf("want a dict, got %s", v.Type())
	}
	sd := starlark.StringDict{}
	for _, item := range d.Items() {
		k, _ := starlark.AsString(item[0])
		sd[k] = item[1]
	}
	return starlarkstruct.FromStringDict(starlarkstruct.Default, sd), nil
}

func mapOf(v any) map[string]any { m, _ := v.(map[string]any); return m }
func listOf(v any) []any         { l, _ := v.([]any); return l }

func orOne(l []any) []any {
	if len(l) == 0 {
		return []any{map[string]any{}}
	}
	return l
}

func stringsOf(v any) []string {
	var out []string
	for _, x := range listOf(v) {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func strOf(v any, def string) string {
	if s, ok := v.(string); ok && s != "" {
		return s
	}
	if v == nil {
		return def
	}
	return fmt.Sprint(v)
}

func intOf(v any, def int) int {
	if n, ok := v.(json.Number); ok {
		if i, err := n.Int64(); err == nil {
			return int(i)
		}
	}
	return def
}
