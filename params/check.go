// Package params checks network-params files — the args of the segdiff
// Kurtosis package — against the pinned ethereum-package's accepted keys, its
// known traps, and the segdiff section's schema, reporting every problem with
// file, line and key path.
package params

import (
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/segdiff/segdiff/clientpatch"
)

// Problem is one finding in a network-params file.
type Problem struct {
	File string
	Line int
	Path string // key path, e.g. participants[0].cl_type
	Msg  string
}

// String formats the problem as "file:line: path: msg".
func (p Problem) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", p.File, p.Line, p.Path, p.Msg)
}

// Checker checks network-params files. The zero value is not usable; build
// one with New. A Checker is safe for concurrent use once built.
type Checker struct {
	clients       map[string]ClientType // nil: no manifest loaded
	clientsSource string
}

// ClientType is what the checker needs of a client-patches entry: its layer
// ("cl" or "el") and the ethereum-package client type it was built for. Empty
// fields are not checked. Mode, when set on a CL entry, must equal the
// file's segdiff.mode (default segmented).
type ClientType struct{ Layer, Type, Mode string }

// Option configures a Checker.
type Option func(*Checker)

// WithClients sets the client-patch entry names that "@clients/<name>" image
// references may use, and where they came from (for messages). Without it,
// every @clients/ reference is reported as unresolvable.
func WithClients(source string, names []string) Option {
	return func(c *Checker) {
		c.clientsSource = source
		c.clients = make(map[string]ClientType, len(names))
		for _, n := range names {
			c.clients[n] = ClientType{}
		}
	}
}

// WithClientTypes is WithClients with each entry's layer and client type.
func WithClientTypes(source string, entries map[string]ClientType) Option {
	return func(c *Checker) {
		c.clientsSource = source
		c.clients = make(map[string]ClientType, len(entries))
		for n, e := range entries {
			c.clients[n] = e
		}
	}
}

// WithManifest is WithClients from a loaded client-patches manifest; it also
// checks that an entry is used for its layer (cl_image / el_image) and with
// the cl_type / el_type it was built for.
func WithManifest(m *clientpatch.Manifest) Option {
	return func(c *Checker) {
		c.clientsSource = m.Path
		c.clients = make(map[string]ClientType, len(m.Clients))
		for _, cl := range m.Clients {
			c.clients[cl.Name] = ClientType{Layer: cl.Layer, Type: cl.Type, Mode: cl.Mode}
		}
	}
}

// New returns a Checker.
func New(opts ...Option) *Checker {
	c := &Checker{}
	for _, o := range opts {
		o(c)
	}
	return c
}

// CheckFile reads and checks one file. The error is for I/O only; problems
// in the content (including YAML syntax) are returned as Problems.
func (c *Checker) CheckFile(path string) ([]Problem, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read network params: %w", err)
	}
	return c.Check(path, data), nil
}

// Check checks the content of one file named file, returning every problem
// sorted by line.
func (c *Checker) Check(file string, data []byte) []Problem {
	r := &run{c: c, file: file}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		r.problems = append(r.problems, Problem{File: file, Line: yamlErrorLine(err), Path: "(document)", Msg: err.Error()})
		return r.problems
	}
	if len(doc.Content) == 0 {
		r.addAt(1, "(document)", "empty file: expected a map of ethereum-package keys")
		return r.problems
	}
	r.top(doc.Content[0])
	sort.SliceStable(r.problems, func(i, j int) bool {
		a, b := r.problems[i], r.problems[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.Msg < b.Msg
	})
	return r.problems
}

// run holds the state of checking one file.
type run struct {
	c        *Checker
	file     string
	problems []Problem
	modeRefs []modeRef // CL images whose entry declares a diffusion mode
}

// modeRef is a CL image reference whose manifest entry runs a given mode.
type modeRef struct {
	n          *yaml.Node
	path, mode string
}

func (r *run) add(n *yaml.Node, path, format string, args ...any) {
	r.addAt(n.Line, path, fmt.Sprintf(format, args...))
}

func (r *run) addAt(line int, path, msg string) {
	r.problems = append(r.problems, Problem{File: r.file, Line: line, Path: path, Msg: msg})
}

// pair is one key/value of a mapping node.
type pair struct {
	key   string
	kn, v *yaml.Node
}

// pairs returns the entries of a mapping, or reports that n is not one.
func (r *run) pairs(n *yaml.Node, path string) ([]pair, bool) {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		r.add(n, path, "must be a map, got %s", kindName(n))
		return nil, false
	}
	out := make([]pair, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		out = append(out, pair{key: n.Content[i].Value, kn: n.Content[i], v: n.Content[i+1]})
	}
	return out, true
}

func (r *run) items(n *yaml.Node, path string) ([]*yaml.Node, bool) {
	n = deref(n)
	if n.Kind != yaml.SequenceNode {
		if isNull(n) {
			return nil, true
		}
		r.add(n, path, "must be a list, got %s", kindName(n))
		return nil, false
	}
	return n.Content, true
}

// knownKeys reports every key of n not in allowed.
func (r *run) knownKeys(ps []pair, path string, allowed []string) {
	for _, p := range ps {
		if !slices.Contains(allowed, p.key) {
			r.add(p.kn, join(path, p.key), "unknown key%s", suggest(p.key, allowed))
		}
	}
}

func (r *run) top(root *yaml.Node) {
	ps, ok := r.pairs(root, "(document)")
	if !ok {
		return
	}
	allowed := append(TopLevelKeys(), SegdiffKey)
	r.knownKeys(ps, "", allowed)
	f := facts{participants: -1}
	for _, p := range ps {
		switch p.key {
		case SegdiffKey:
			f.segdiff = p.v
		case "participants":
			f.participants = r.participants(p.v, &f)
		case "participants_matrix":
			f.matrix = r.matrix(p.v, &f)
		case "port_publisher":
			r.portPublisher(p.v)
		case "additional_services":
			f.services = r.additionalServices(p.v)
		case "network_params":
			f.network = p.v
			if ps2, ok := r.pairs(p.v, p.key); ok {
				r.knownKeys(ps2, p.key, BlockKeys[p.key])
			}
		case "buildoor_params":
			f.buildoor = p.v
			if ps2, ok := r.pairs(p.v, p.key); ok {
				r.knownKeys(ps2, p.key, BlockKeys[p.key])
			}
		case "mev_type":
			f.mevType = p.v
			if !isNull(p.v) && !slices.Contains(MEVTypes, p.v.Value) {
				r.add(p.v, p.key, "unknown mev_type %q; use one of %s or null%s", p.v.Value, strings.Join(MEVTypes, ", "), suggest(p.v.Value, MEVTypes))
			}
		case "disruptoor_params":
			f.disruptoor = p.v
			if ps2, ok := r.pairs(p.v, p.key); ok {
				r.knownKeys(ps2, p.key, BlockKeys[p.key])
			}
		default:
			if keys, isBlock := BlockKeys[p.key]; isBlock {
				if ps2, ok := r.pairs(p.v, p.key); ok {
					r.knownKeys(ps2, p.key, keys)
				}
			}
		}
	}
	r.network(&f)
	r.builders(&f)
	r.segdiff(&f)
	r.modes(&f)
}

// builders checks buildoor_params.instances' preconditions.
func (r *run) builders(f *facts) {
	if f.buildoor == nil {
		return
	}
	ps, ok := pairsQuiet(f.buildoor)
	if !ok {
		return
	}
	for _, p := range ps {
		if p.key != "instances" || isNull(p.v) {
			continue
		}
		if !slices.Contains(f.services, "buildoor") {
			r.add(p.kn, "buildoor_params.instances", "needs buildoor in additional_services")
		}
		if f.mevType != nil && !isNull(f.mevType) {
			r.add(p.kn, "buildoor_params.instances", "cannot be combined with mev_type %s (the ePBS builder replaces mev-boost)", f.mevType.Value)
		}
		items, ok := r.items(p.v, "buildoor_params.instances")
		if !ok {
			continue
		}
		total := f.total()
		for i, item := range items {
			ips, ok := pairsQuiet(item)
			if !ok {
				r.add(item, fmt.Sprintf("buildoor_params.instances[%d]", i), "must be a map {participant, count, image}")
				continue
			}
			for _, q := range ips {
				path := fmt.Sprintf("buildoor_params.instances[%d].%s", i, q.key)
				switch q.key {
				case "participant":
					if v, ok := r.int(q.v, path); ok && (v < 1 || v > int64(total)) {
						r.add(q.v, path, "participant %d out of range: 1-based, %d participants", v, total)
					}
				case "count", "image":
				default:
					r.add(q.kn, path, "unknown key%s", suggest(q.key, []string{"participant", "count", "image"}))
				}
			}
		}
	}
}

// modes checks that the CL images run the mode segdiff.mode declares (the
// suite's verdicts and reports are labelled with it).
func (r *run) modes(f *facts) {
	mode := "segmented"
	if f.segdiff != nil {
		if ps, ok := pairsQuiet(f.segdiff); ok {
			for _, p := range ps {
				if p.key == "mode" {
					mode = p.v.Value
				}
			}
		}
	}
	if !slices.Contains(SegdiffModes, mode) {
		return // reported by segdiff
	}
	for _, ref := range r.modeRefs {
		if ref.mode != mode {
			r.add(ref.n, ref.path, "%s runs mode %s (%s), but segdiff.mode is %s", ref.n.Value, ref.mode, r.c.clientsSource, mode)
		}
	}
}

// facts collects what cross-key checks need.
type facts struct {
	segdiff, network, disruptoor *yaml.Node
	participants                 int // expanded count; -1 when absent
	matrix                       int
	services                     []string
	// validatorCounts: explicit validator_count per expanded participant (-1 = default).
	validatorCounts []int64
	supernode       bool
	nimbus          []*yaml.Node // cl_type: nimbus values
	buildoor        *yaml.Node   // buildoor_params
	mevType         *yaml.Node
}

func (f *facts) total() int {
	n := f.participants
	if n < 0 {
		n = 1 // ethereum-package's default participant
	}
	return n + f.matrix
}

func (r *run) participants(n *yaml.Node, f *facts) int {
	items, ok := r.items(n, "participants")
	if !ok {
		return 0
	}
	total := 0
	for i, item := range items {
		path := fmt.Sprintf("participants[%d]", i)
		ps, ok := r.pairs(item, path)
		if !ok {
			continue
		}
		r.knownKeys(ps, path, ParticipantKeys)
		count, validators := int64(1), int64(-1)
		for _, p := range ps {
			kp := join(path, p.key)
			switch p.key {
			case "count":
				if v, ok := r.int(p.v, kp); ok {
					if v < 0 {
						r.add(p.v, kp, "must be >= 0, got %d", v)
					}
					count = v
				}
			case "validator_count":
				if !isNull(p.v) {
					if v, ok := r.int(p.v, kp); ok {
						validators = v
					}
				}
			case "supernode":
				f.supernode = f.supernode || p.v.Value == "true"
			default:
				r.participantValue(p, kp, f)
			}
		}
		r.imageRefs(ps, path)
		for range max(count, 0) {
			f.validatorCounts = append(f.validatorCounts, validators)
		}
		total += int(max(count, 0))
	}
	return total
}

// participantValue checks client types and per-participant traps.
func (r *run) participantValue(p pair, path string, f *facts) {
	switch p.key {
	case "prometheus_config":
		// ethereum-package replaces its default dict wholesale and then reads
		// both keys, so a partial dict fails inside the package.
		if ps, ok := r.pairs(p.v, path); ok {
			have := map[string]bool{}
			for _, q := range ps {
				have[q.key] = true
			}
			if !have["scrape_interval"] || !have["labels"] {
				r.add(p.v, path, "give both scrape_interval and labels (labels: null is fine): ethereum-package replaces its default prometheus_config with this map and reads both")
			}
		}
	case "cl_type":
		if p.v.Value == "nimbus" {
			f.nimbus = append(f.nimbus, p.v)
		}
		r.clientType(p.v, path, CLTypes, false)
	case "el_type":
		r.clientType(p.v, path, ELTypes, true)
	case "vc_type":
		if p.v.Value != "" {
			r.clientType(p.v, path, VCTypes, false)
		}
	}
}

// imageRefs checks "@clients/<name>" images of one participant (or matrix
// entry) against the manifest: the entry exists, has the image's layer and
// was built for the participant's client type.
func (r *run) imageRefs(ps []pair, path string) {
	types := map[string]string{"cl": "lighthouse", "el": "geth", "vc": ""}
	for _, p := range ps {
		if layer, ok := strings.CutSuffix(p.key, "_type"); ok {
			types[layer] = p.v.Value
		}
	}
	if types["vc"] == "" {
		types["vc"] = types["cl"]
	}
	for _, p := range ps {
		layer, isImage := strings.CutSuffix(p.key, "_image")
		if !isImage || (layer != "cl" && layer != "el" && layer != "vc") {
			continue
		}
		ref, isRef := strings.CutPrefix(p.v.Value, ClientsRefPrefix)
		if !isRef {
			continue
		}
		kp := join(path, p.key)
		if r.c.clients == nil {
			r.add(p.v, kp, "%s refers to client-patches, but no client manifest was loaded", p.v.Value)
			continue
		}
		entry, ok := r.c.clients[ref]
		if !ok {
			names := make([]string, 0, len(r.c.clients))
			for k := range r.c.clients {
				names = append(names, k)
			}
			sort.Strings(names)
			r.add(p.v, kp, "%s: no entry %q in %s (entries: %s)%s", p.v.Value, ref, r.c.clientsSource, strings.Join(names, ", "), suggest(ref, names))
			continue
		}
		if layer == "vc" {
			continue // a VC image may come from the CL's entry
		}
		if layer == "cl" && entry.Mode != "" {
			r.modeRefs = append(r.modeRefs, modeRef{n: p.v, path: kp, mode: entry.Mode})
		}
		if entry.Layer != "" && entry.Layer != layer {
			r.add(p.v, kp, "%s is an image for the %s layer in %s, not %s", p.v.Value, entry.Layer, r.c.clientsSource, layer)
		} else if entry.Type != "" && entry.Type != types[layer] && knownType(layer, types[layer]) {
			r.add(p.v, kp, "%s is built for %s_type %s, but this participant has %s_type %s", p.v.Value, layer, entry.Type, layer, types[layer])
		}
	}
}

// knownType reports whether typ is a valid type of layer; a misspelled type
// is reported once, by clientType, not again as a manifest mismatch.
func knownType(layer, typ string) bool {
	switch layer {
	case "cl":
		return slices.Contains(CLTypes, typ)
	case "el":
		return slices.Contains(ELTypes, typ)
	}
	return false
}

func (r *run) clientType(n *yaml.Node, path string, known []string, nullable bool) {
	if nullable && (isNull(n) || strings.EqualFold(n.Value, "none")) {
		return
	}
	if !slices.Contains(known, n.Value) {
		r.add(n, path, "unknown client type %q; ethereum-package %s accepts %s%s", n.Value, EthereumPackageCommit[:7], strings.Join(known, ", "), suggest(n.Value, known))
	}
}

func (r *run) matrix(n *yaml.Node, f *facts) int {
	ps, ok := r.pairs(n, "participants_matrix")
	if !ok {
		return 0
	}
	allowed := make([]string, 0, len(ParticipantMatrixKeys))
	for k := range ParticipantMatrixKeys {
		allowed = append(allowed, k)
	}
	sort.Strings(allowed)
	r.knownKeys(ps, "participants_matrix", allowed)
	sizes := map[string]int{"el": 1, "cl": 1, "vc": 1, "remote_signer": 1}
	count := int64(1)
	var clValidators []int64
	for _, p := range ps {
		path := join("participants_matrix", p.key)
		if p.key == "count" {
			if v, ok := r.int(p.v, path); ok {
				count = v
			}
			continue
		}
		keys, known := ParticipantMatrixKeys[p.key]
		if !known {
			continue
		}
		items, ok := r.items(p.v, path)
		if !ok {
			continue
		}
		if len(items) > 0 {
			sizes[p.key] = len(items)
		}
		for i, item := range items {
			ip := fmt.Sprintf("%s[%d]", path, i)
			ips, ok := r.pairs(item, ip)
			if !ok {
				continue
			}
			r.knownKeys(ips, ip, keys)
			validators := int64(-1)
			for _, q := range ips {
				switch q.key {
				case "validator_count":
					if v, ok := r.int(q.v, join(ip, q.key)); ok {
						validators = v
					}
				case "supernode":
					f.supernode = f.supernode || q.v.Value == "true"
				default:
					r.participantValue(q, join(ip, q.key), f)
				}
			}
			r.imageRefs(ips, ip)
			if p.key == "cl" {
				clValidators = append(clValidators, validators)
			}
		}
	}
	if len(clValidators) == 0 {
		clValidators = []int64{-1}
	}
	per := sizes["vc"] * sizes["remote_signer"] * int(max(count, 0))
	for range sizes["el"] {
		for _, v := range clValidators {
			for range per {
				f.validatorCounts = append(f.validatorCounts, v)
			}
		}
	}
	return sizes["el"] * sizes["cl"] * per
}

func (r *run) portPublisher(n *yaml.Node) {
	ps, ok := r.pairs(n, "port_publisher")
	if !ok {
		return
	}
	r.knownKeys(ps, "port_publisher", append([]string{"nat_exit_ip"}, PortPublisherGroups...))
	for _, p := range ps {
		if slices.Contains(PortPublisherGroups, p.key) {
			if gps, ok := r.pairs(p.v, join("port_publisher", p.key)); ok {
				r.knownKeys(gps, join("port_publisher", p.key), PortPublisherGroupKeys)
			}
		}
	}
}

func (r *run) additionalServices(n *yaml.Node) []string {
	items, ok := r.items(n, "additional_services")
	if !ok {
		return nil
	}
	var names []string
	prometheusAt := -1
	for i, item := range items {
		path := fmt.Sprintf("additional_services[%d]", i)
		if item.Kind != yaml.ScalarNode {
			r.add(item, path, "must be a service name, got %s", kindName(item))
			continue
		}
		name := item.Value
		names = append(names, name)
		if !slices.Contains(AdditionalServices, name) {
			r.add(item, path, "unknown additional service %q%s", name, suggest(name, AdditionalServices))
		}
		switch name {
		case "prometheus":
			prometheusAt = i
		case "grafana":
			// ethereum-package launches services in list order; grafana reads
			// the Prometheus URL set by the prometheus branch.
			if prometheusAt < 0 {
				r.add(item, path, "grafana must come after prometheus in additional_services (services launch in list order and grafana needs prometheus's URL)")
			}
		}
	}
	return names
}

// network checks the traps that span network_params and participants.
func (r *run) network(f *facts) {
	values := map[string]*yaml.Node{}
	if f.network != nil {
		if ps, ok := pairsQuiet(f.network); ok {
			for _, p := range ps {
				values[p.key] = p.v
			}
		}
	}
	if n, ok := values["network"]; ok {
		name := n.Value
		switch {
		case strings.Contains(name, "devnet"):
			r.add(n, "network_params.network", "%q joins the public devnet of that name (config downloaded from github.com/<devnet_repo>/…-devnets, default images rewritten, no local genesis); a local devnet must use network: kurtosis", name)
		case name != "kurtosis" && !strings.HasSuffix(name, "-shadowfork"):
			r.add(n, "network_params.network", "%q is not kurtosis: ethereum-package joins an existing network (validators zeroed, checkpoint sync); a local devnet must use network: kurtosis", name)
		}
	}
	// Epochs are uint64; FAR_FUTURE is 2^64-1, one more overflows.
	for key, n := range values {
		isEpoch := strings.HasSuffix(key, "_fork_epoch") || (strings.HasPrefix(key, "bpo_") && strings.HasSuffix(key, "_epoch"))
		if isEpoch {
			r.uint(n, "network_params."+key)
		}
	}
	// builder_count > 0 requires Gloas at genesis.
	if n, ok := values["builder_count"]; ok {
		if count, ok := r.int(n, "network_params.builder_count"); ok && count > 0 {
			gloas, set := values["gloas_fork_epoch"]
			epoch := FarFutureEpoch
			if set {
				if v, ok := r.uint(gloas, "network_params.gloas_fork_epoch"); ok {
					epoch = v
				}
			}
			if epoch != 0 {
				r.add(n, "network_params.builder_count", "builder_count %d registers builders at genesis and needs network_params.gloas_fork_epoch: 0 (it is %s)", count, epochString(epoch, set))
			}
		}
	}
	// seconds_per_slot vs slot_duration_ms: both set must agree.
	sps, hasSPS := values["seconds_per_slot"]
	sdm, hasSDM := values["slot_duration_ms"]
	if hasSPS {
		if v, ok := r.int(sps, "network_params.seconds_per_slot"); ok && v == 0 {
			r.add(sps, "network_params.seconds_per_slot", "must not be 0")
		}
	}
	if hasSDM {
		if v, ok := r.int(sdm, "network_params.slot_duration_ms"); ok && v < 1000 {
			r.add(sdm, "network_params.slot_duration_ms", "must be >= 1000, got %d", v)
		}
	}
	if hasSPS && hasSDM {
		s, ok1 := intQuiet(sps)
		ms, ok2 := intQuiet(sdm)
		if ok1 && ok2 && s*1000 != ms {
			r.add(sdm, "network_params.slot_duration_ms", "slot_duration_ms %d disagrees with seconds_per_slot %d; set only one (ethereum-package derives the other) or make them agree", ms, s)
		}
	}
	// Nimbus: >= 12 s slots on mainnet, exactly 6 s on minimal.
	if len(f.nimbus) > 0 {
		preset, seconds := "mainnet", int64(12)
		if n, ok := values["preset"]; ok {
			preset = n.Value
		}
		if preset == "minimal" {
			seconds = 6
		}
		if n, ok := values["seconds_per_slot"]; ok {
			seconds, _ = intQuiet(n)
		} else if n, ok := values["slot_duration_ms"]; ok {
			ms, _ := intQuiet(n)
			seconds = ms / 1000
		}
		if (preset == "minimal" && seconds != 6) || (preset != "minimal" && seconds < 12) {
			r.add(f.nimbus[0], "cl_type", "nimbus needs seconds_per_slot >= 12 on the mainnet preset and == 6 on minimal (preset %s, %d s)", preset, seconds)
		}
	}
	// Fulu on a local network needs a node that custodies every column.
	fuluScheduled := true
	if n, ok := values["fulu_fork_epoch"]; ok {
		if v, ok := r.uint(n, "network_params.fulu_fork_epoch"); ok && v == FarFutureEpoch {
			fuluScheduled = false
		}
	}
	perfect := false
	if n, ok := values["perfect_peerdas_enabled"]; ok {
		perfect = n.Value == "true"
	}
	defaultKeys := int64(128)
	if n, ok := values["num_validator_keys_per_node"]; ok {
		if v, ok := intQuiet(n); ok {
			defaultKeys = v
		}
	}
	if fuluScheduled && !f.supernode && !perfect {
		counts := f.validatorCounts
		if f.participants < 0 {
			counts = append([]int64{-1}, counts...)
		}
		big := false
		for _, c := range counts {
			if c < 0 {
				c = defaultKeys
			}
			if c >= 128 {
				big = true
			}
		}
		if !big {
			r.addAt(lineOf(f.network, 1), "participants", "Fulu is scheduled but no participant has supernode: true or validator_count >= 128 (and perfect_peerdas_enabled is off); ethereum-package fails: set supernode: true on one participant")
		}
	}
}

// segdiff checks our own section.
func (r *run) segdiff(f *facts) {
	if f.segdiff == nil {
		return
	}
	ps, ok := r.pairs(f.segdiff, SegdiffKey)
	if !ok {
		return
	}
	allowed := make([]string, 0, len(SegdiffKeys))
	for k := range SegdiffKeys {
		allowed = append(allowed, k)
	}
	sort.Strings(allowed)
	r.knownKeys(ps, SegdiffKey, allowed)
	for _, p := range ps {
		path := join(SegdiffKey, p.key)
		keys, known := SegdiffKeys[p.key]
		if !known {
			continue
		}
		if p.key == "mode" {
			if !slices.Contains(SegdiffModes, p.v.Value) {
				r.add(p.v, path, "unknown mode %q; use one of %s%s", p.v.Value, strings.Join(SegdiffModes, ", "), suggest(p.v.Value, SegdiffModes))
			}
			continue
		}
		sub, ok := r.pairs(p.v, path)
		if !ok {
			continue
		}
		r.knownKeys(sub, path, keys)
		for _, q := range sub {
			qp := join(path, q.key)
			switch {
			case p.key == "prometheus" && q.key == "scrape_interval":
				if !isDuration(q.v.Value) {
					r.add(q.v, qp, "%q is not a Prometheus duration such as 5s or 500ms", q.v.Value)
				}
			case p.key == "grafana" && q.key == "enabled":
				if q.v.Tag != "!!bool" {
					r.add(q.v, qp, "must be true or false, got %q", q.v.Value)
				}
			}
		}
		if p.key == "link_classes" {
			r.linkClasses(p.v, sub, f)
		}
		if p.key == "load" {
			r.load(p.v, sub, f)
		}
	}
}

func (r *run) linkClasses(n *yaml.Node, ps []pair, f *facts) {
	const path = "segdiff.link_classes"
	usesCustom, hasCustom := false, false
	class := func(v *yaml.Node, p string) {
		if !slices.Contains(LinkClasses, v.Value) {
			r.add(v, p, "unknown link class %q; use one of %s%s", v.Value, strings.Join(LinkClasses, ", "), suggest(v.Value, LinkClasses))
		}
		if v.Value == "custom" {
			usesCustom = true
		}
	}
	total := f.total()
	for _, p := range ps {
		kp := join(path, p.key)
		switch p.key {
		case "default":
			class(p.v, kp)
		case "overrides":
			items, ok := r.items(p.v, kp)
			if !ok {
				continue
			}
			seen := map[int64]bool{}
			for i, item := range items {
				ip := fmt.Sprintf("%s[%d]", kp, i)
				ips, ok := r.pairs(item, ip)
				if !ok {
					continue
				}
				r.knownKeys(ips, ip, LinkClassOverrideKeys)
				hasParticipant, hasClass := false, false
				for _, q := range ips {
					switch q.key {
					case "participant":
						hasParticipant = true
						idx, ok := r.int(q.v, join(ip, q.key))
						if !ok {
							continue
						}
						switch {
						case idx < 0 || idx >= int64(total):
							r.add(q.v, join(ip, q.key), "participant %d out of range: %d participants after count expansion (0-based)", idx, total)
						case seen[idx]:
							r.add(q.v, join(ip, q.key), "participant %d already has an override", idx)
						}
						seen[idx] = true
					case "class":
						hasClass = true
						class(q.v, join(ip, q.key))
					}
				}
				if !hasParticipant || !hasClass {
					r.add(item, ip, "needs both participant and class")
				}
			}
		case "custom":
			hasCustom = true
			cps, ok := r.pairs(p.v, kp)
			if !ok {
				continue
			}
			for _, q := range cps {
				if !slices.Contains(LinkClassCustomKeys, q.key) {
					continue // reported by knownKeys below
				}
				v, ok := r.int(q.v, join(kp, q.key))
				if ok && (v < 0 || (v == 0 && q.key != "latency_ms")) {
					r.add(q.v, join(kp, q.key), "must be positive, got %d", v)
				}
			}
			r.knownKeys(cps, kp, LinkClassCustomKeys)
		}
	}
	if usesCustom && !hasCustom {
		r.add(n, path, "class custom is used but %s.custom {up_mbps, down_mbps, latency_ms} is not set", path)
	}
	if f.disruptoor != nil {
		if dps, ok := pairsQuiet(f.disruptoor); ok {
			for _, p := range dps {
				if (p.key == "shaping" || p.key == "config") && !isNull(p.v) {
					r.add(p.kn, join("disruptoor_params", p.key), "conflicts with segdiff.link_classes, which generates disruptoor_params.shaping; remove one")
				}
			}
		}
	}
}

// int parses an integer scalar, reporting anything else.
func (r *run) int(n *yaml.Node, path string) (int64, bool) {
	v, ok := intQuiet(n)
	if !ok {
		r.add(n, path, "must be an integer, got %q", n.Value)
	}
	return v, ok
}

func (r *run) uint(n *yaml.Node, path string) (uint64, bool) {
	n = deref(n)
	if n.Kind == yaml.ScalarNode && n.Tag == "!!int" {
		if v, err := strconv.ParseUint(strings.ReplaceAll(n.Value, "_", ""), 0, 64); err == nil {
			return v, true
		}
	}
	r.add(n, path, "must be an unsigned integer (at most 2^64-1), got %q", n.Value)
	return 0, false
}

func intQuiet(n *yaml.Node) (int64, bool) {
	n = deref(n)
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
		return 0, false
	}
	v, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64)
	return v, err == nil
}

func pairsQuiet(n *yaml.Node) ([]pair, bool) {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		return nil, false
	}
	out := make([]pair, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		out = append(out, pair{key: n.Content[i].Value, kn: n.Content[i], v: n.Content[i+1]})
	}
	return out, true
}

func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	n = deref(n)
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a map"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("%q", n.Value)
	}
	return "an alias"
}

func lineOf(n *yaml.Node, def int) int {
	if n == nil {
		return def
	}
	return n.Line
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func epochString(epoch uint64, set bool) string {
	if !set {
		return "unset, i.e. FAR_FUTURE"
	}
	if epoch == FarFutureEpoch {
		return "FAR_FUTURE"
	}
	return strconv.FormatUint(epoch, 10)
}

// isDuration accepts the Prometheus durations our package accepts: a positive
// integer followed by ms, s, m or h.
func isDuration(s string) bool {
	for _, unit := range []string{"ms", "s", "m", "h"} {
		if num, ok := strings.CutSuffix(s, unit); ok {
			v, err := strconv.ParseUint(num, 10, 64)
			return err == nil && v > 0
		}
	}
	return false
}

// yamlErrorLine extracts the line from a yaml.v3 error ("yaml: line N: ...").
func yamlErrorLine(err error) int {
	msg := err.Error()
	if _, rest, ok := strings.Cut(msg, "line "); ok {
		end := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
		if end > 0 {
			if n, err := strconv.Atoi(rest[:end]); err == nil {
				return n
			}
		}
	}
	return 1
}

// suggest returns " (did you mean X?)" for the closest candidate within a
// small edit distance, or "".
func suggest(got string, candidates []string) string {
	best, bestD := "", len(got)/2+2
	for _, c := range candidates {
		if d := distance(got, c); d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" || bestD > 3 {
		return ""
	}
	return fmt.Sprintf(" (did you mean %s?)", best)
}

// distance is the Damerau-Levenshtein (optimal string alignment) distance,
// so transpositions such as cl_tpye/cl_type count as one edit.
func distance(a, b string) int {
	n, m := len(a), len(b)
	d := make([][]int, n+1)
	for i := range d {
		d[i] = make([]int, m+1)
		d[i][0] = i
	}
	for j := 0; j <= m; j++ {
		d[0][j] = j
	}
	for i := 1; i <= n; i++ {
		for j := 1; j <= m; j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[n][m]
}
