package params

import (
	"fmt"
	"slices"

	"gopkg.in/yaml.v3"
)

// Rules on additional_services and their parameter blocks.

// grafanaAfterPrometheus: main.star launches services in list order, and
// the grafana branch reads the Prometheus URL the prometheus branch sets.
func (r *run) grafanaAfterPrometheus(f *facts) {
	prometheus := false
	for _, s := range f.services {
		switch s.name {
		case "prometheus":
			prometheus = true
		case "grafana":
			if !prometheus {
				r.add(s.n, s.path, "grafana must come after prometheus in additional_services (services launch in list order and grafana needs prometheus's URL); ethereum-package fails: local variable prometheus_private_url referenced before assignment")
				return
			}
		}
	}
}

func (r *run) mevType(f *facts) {
	n := f.topValue("mev_type")
	if n == nil || isNull(n) {
		return
	}
	if v := deref(n).Value; !slices.Contains(MEVTypes, v) {
		r.add(n, "mev_type", "Unsupported MEV type: %s, please use 'mock', 'flashbots', 'mev-rs', 'commit-boost', 'helix' or 'buildoor' type%s", v, didYouMean(v, MEVTypes))
	}
}

// buildoor checks buildoor_params.instances as input_parser.star does.
func (r *run) buildoor(f *facts) {
	if f.servicesBad {
		return // the package fails iterating additional_services first
	}
	instances := valueOf(f.topValue("buildoor_params"), "instances")
	given := instances != nil && !isNull(instances) && len(deref(instances).Content) > 0
	enabled := f.has("buildoor")
	if given && !enabled {
		r.add(instances, "buildoor_params.instances", "buildoor_params.instances is set but 'buildoor' is not in additional_services. Add 'buildoor' to additional_services to spin it up.")
	}
	if mev := f.topValue("mev_type"); enabled && mev != nil && !isNull(mev) {
		r.add(mev, "mev_type", "additional_services buildoor cannot be combined with a global mev_type (%s). Use additional_services: [buildoor] with buildoor_params.instances for dedicated per-participant builders, or mev_type: buildoor for a single shared builder, but not both.", deref(mev).Value)
	}
	if !given {
		return
	}
	items, ok := r.items(instances, "buildoor_params.instances")
	if !ok {
		return
	}
	total := len(f.participants)
	seen := map[int64]bool{}
	for i, item := range items {
		ip := fmt.Sprintf("buildoor_params.instances[%d]", i)
		ps, ok := pairsOf(item)
		if !ok {
			r.add(item, ip, "must be a map {participant, count, image}")
			continue
		}
		var participant int64
		for _, q := range ps {
			path := join(ip, q.key)
			switch q.key {
			case "participant":
				v, ok := intOf(q.v)
				if ok && f.uncounted {
					continue // the number of participants is unknown
				}
				if !ok || v < 1 || v > int64(total) {
					r.add(q.v, path, "buildoor_params.instances participant must be a 1-based participant index between 1 and %d, got %s.", total, deref(q.v).Value)
					continue
				}
				if seen[v] {
					r.add(q.v, path, "buildoor_params.instances has duplicate entries for participant %d; use a single entry with the desired count.", v)
				}
				seen[v], participant = true, v
			case "count":
				if v, ok := intOf(q.v); !ok || v < 1 {
					r.add(q.v, path, "buildoor_params.instances count for participant %d must be an integer >= 1, got %s.", participant, deref(q.v).Value)
				}
			case "image":
			default:
				r.add(q.kn, path, "unknown key%s: ethereum-package reads only participant, count and image", didYouMean(q.key, []string{"participant", "count", "image"}))
			}
		}
		if valueOf(item, "participant") == nil {
			r.add(item, ip, "needs participant (ethereum-package fails: key \"participant\" not in dict)")
		}
	}
}

// shapingComponents are the components a disruptoor selector accepts.
var shapingComponents = []string{"el", "cl", "vc", "all"}

// disruptoorShaping applies disruptoor_launcher.star's checks to
// disruptoor_params when the disruptoor service is launched: the blocks'
// types, config exclusive of partitions/shaping, and translate_shaping's
// per-rule checks (at least one of delay, loss or bandwidth; jitter needs
// delay; include_control: true, or a scope that includes it; a target).
func (r *run) disruptoorShaping(f *facts) {
	params := f.topValue("disruptoor_params")
	if params == nil || !f.has("disruptoor") {
		return
	}
	for key, kind := range map[string]yaml.Kind{"config": yaml.MappingNode, "partitions": yaml.SequenceNode, "shaping": yaml.SequenceNode, "extra_args": yaml.SequenceNode} {
		if n := valueOf(params, key); n != nil && !isNull(n) && deref(n).Kind != kind {
			what := map[yaml.Kind]string{yaml.MappingNode: "a map", yaml.SequenceNode: "a list"}[kind]
			r.add(n, "disruptoor_params."+key, "disruptoor_params.%s must be %s", key, what)
		}
	}
	nonEmpty := func(key string) bool {
		n := valueOf(params, key)
		return n != nil && !isNull(n) && len(deref(n).Content) > 0
	}
	if nonEmpty("config") && (nonEmpty("partitions") || nonEmpty("shaping")) {
		r.add(valueOf(params, "config"), "disruptoor_params.config", "disruptoor_params.config cannot be used together with disruptoor_params.partitions or disruptoor_params.shaping")
		return
	}
	shaping := valueOf(params, "shaping")
	if shaping == nil || deref(shaping).Kind != yaml.SequenceNode {
		return
	}
	for i, rule := range deref(shaping).Content {
		path := fmt.Sprintf("disruptoor_params.shaping[%d]", i)
		if deref(rule).Kind != yaml.MappingNode {
			r.add(rule, path, "%s must be a map", path)
			continue
		}
		has := func(keys ...string) bool {
			return slices.ContainsFunc(keys, func(k string) bool { return valueOf(rule, k) != nil })
		}
		switch {
		case !has("delay", "loss", "bandwidth"):
			r.add(rule, path, "%s must define at least one of delay, loss, or bandwidth", path)
		case has("jitter") && !has("delay"):
			r.add(valueOf(rule, "jitter"), path+".jitter", "%s.jitter requires delay to be set", path)
		case has("scope"):
			if !slices.Contains(scalarList(valueOf(rule, "scope")), "include_control") {
				r.add(valueOf(rule, "scope"), path+".scope", "%s.scope must include include_control", path)
			}
		case !isTrue(valueOf(rule, "include_control")):
			r.add(rule, path, "%s.include_control must be true because disruptoor v0 shaping currently requires control traffic acknowledgement", path)
		case !has("target", "participants", "labels", "selector"):
			r.add(rule, path, "%s must define participants, labels, selector, or target", path)
		}
		if c := valueOf(rule, "components"); c != nil && !isNull(c) {
			for _, comp := range scalarList(c) {
				if !slices.Contains(shapingComponents, comp) {
					r.add(c, path+".components", "%s.components contains unsupported component '%s', expected one of el, cl, vc", path, comp)
				}
			}
		}
	}
}

// scalarList returns a scalar's value, or a list's scalar items.
func scalarList(n *yaml.Node) []string {
	n = deref(n)
	if n.Kind == yaml.ScalarNode {
		return []string{n.Value}
	}
	var out []string
	for _, c := range n.Content {
		out = append(out, deref(c).Value)
	}
	return out
}
