package params

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/segdiff/segdiff/diffusion/mode"
	"github.com/segdiff/segdiff/diffusion/role"
	"github.com/segdiff/segdiff/internal/clientpatch"
)

// The segdiff section: its keys are checked by the walk against
// SegdiffKeys; segdiffSections checks each subsection's values, mirroring
// kurtosis/src/package_io/input_parser.star. A new subsection adds its keys
// to SegdiffKeys and, if its values need checking, a function here.
var segdiffSections = map[string]func(r *run, f *facts, n *yaml.Node, path string){
	"mode":         (*run).segdiffMode,
	"mixed":        (*run).segdiffMixed,
	"prometheus":   (*run).segdiffPrometheus,
	"grafana":      (*run).segdiffGrafana,
	"link_classes": (*run).linkClasses,
	"load":         (*run).segdiffLoad,
}

// segdiffLoad checks segdiff.load (internal/params/load.go).
func (r *run) segdiffLoad(f *facts, n *yaml.Node, _ string) {
	ps, ok := pairsOf(n)
	if !ok {
		return // not a map: reported by the walk
	}
	r.load(n, ps, f)
}

func (r *run) segdiff(f *facts) {
	ps, ok := pairsOf(f.segdiff)
	if !ok {
		return // not a map: reported by the walk
	}
	for _, p := range ps {
		if check, ok := segdiffSections[p.key]; ok {
			check(r, f, p.v, join(SegdiffKey, p.key))
		}
	}
}

func (r *run) segdiffMode(_ *facts, n *yaml.Node, path string) {
	if modes := mode.ClientNames(); !slices.Contains(modes, deref(n).Value) {
		v := deref(n).Value
		r.add(n, path, "unknown mode %q; use one of %s%s", v, strings.Join(modes, ", "), didYouMean(v, modes))
	}
}

func (r *run) segdiffMixed(_ *facts, n *yaml.Node, path string) {
	if !isBool(n) {
		r.add(n, path, "must be true or false, got %q", deref(n).Value)
	}
}

func (r *run) segdiffPrometheus(_ *facts, n *yaml.Node, path string) {
	if v := valueOf(n, "scrape_interval"); v != nil && !isDuration(deref(v).Value) {
		r.add(v, join(path, "scrape_interval"), "%q is not a Prometheus duration such as 5s or 500ms", deref(v).Value)
	}
}

func (r *run) segdiffGrafana(_ *facts, n *yaml.Node, path string) {
	if v := valueOf(n, "enabled"); v != nil && !isBool(v) {
		r.add(v, join(path, "enabled"), "must be true or false, got %q", deref(v).Value)
	}
}

func (r *run) linkClasses(f *facts, n *yaml.Node, path string) {
	ps, ok := pairsOf(n)
	if !ok {
		return
	}
	usesCustom, hasCustom := false, false
	class := func(v *yaml.Node, p string) {
		if c := deref(v).Value; !slices.Contains(LinkClasses, c) {
			r.add(v, p, "unknown link class %q; use one of %s%s", c, strings.Join(LinkClasses, ", "), didYouMean(c, LinkClasses))
		}
		usesCustom = usesCustom || deref(v).Value == "custom"
	}
	total := len(f.participants)
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
				r.knownKeys(ips, ip, LinkClassOverrideKeys, "Invalid parameter %s, allowed fields: [participant class]")
				hasParticipant, hasClass := false, false
				for _, q := range ips {
					switch q.key {
					case "participant":
						hasParticipant = true
						idx, ok := r.int(q.v, join(ip, q.key))
						switch {
						case !ok, f.uncounted:
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
		case "home", "datacenter":
			fps, ok := r.pairs(p.v, kp)
			if !ok {
				continue
			}
			for _, q := range fps {
				if q.key == "loss_percent" {
					r.lossPercent(q.v, join(kp, q.key))
					continue
				}
				r.add(q.kn, join(kp, q.key), "unknown key%s; the segdiff package fails: Invalid parameter %s, allowed fields: %v (the rates of class %s are the study's; for other rates use class custom)",
					didYouMean(q.key, LinkClassFixedKeys), join(kp, q.key), LinkClassFixedKeys, p.key)
			}
		case "custom":
			hasCustom = true
			cps, ok := r.pairs(p.v, kp)
			if !ok {
				continue
			}
			r.knownKeys(cps, kp, LinkClassCustomKeys, "Invalid parameter %s, allowed fields: [up_mbps down_mbps latency_ms loss_percent]")
			for _, q := range cps {
				if !slices.Contains(LinkClassCustomKeys, q.key) {
					continue
				}
				if q.key == "loss_percent" {
					r.lossPercent(q.v, join(kp, q.key))
					continue
				}
				v, ok := r.int(q.v, join(kp, q.key))
				if ok && (v < 0 || (v == 0 && q.key != "latency_ms")) {
					r.add(q.v, join(kp, q.key), "must be positive, got %d", v)
				}
			}
		}
	}
	if usesCustom && !hasCustom {
		r.add(n, path, "class custom is used but %s.custom {up_mbps, down_mbps, latency_ms} is not set", path)
	}
	dps, _ := pairsOf(f.topValue("disruptoor_params"))
	for _, p := range dps {
		if (p.key == "shaping" || p.key == "config") && !isNull(p.v) {
			r.add(p.kn, join("disruptoor_params", p.key), "conflicts with segdiff.link_classes, which generates disruptoor_params.shaping; remove one")
		}
	}
}

// lossPercent checks a link class's loss_percent: the share of the CL's
// outgoing packets netem drops (disruptoor's loss), a number in [0, 100).
func (r *run) lossPercent(n *yaml.Node, path string) {
	v, ok := floatOf(n)
	switch {
	case !ok:
		r.add(n, path, "must be a number, the percentage of packets dropped (e.g. 1 or 0.5), got %s %s", typeName(n), kindName(n))
	case v < 0 || v >= 100:
		r.add(n, path, "must be a percentage, 0 <= loss_percent < 100, got %s", deref(n).Value)
	}
}

// floatOf reads an integer or float scalar.
func floatOf(n *yaml.Node) (float64, bool) {
	if v, ok := intOf(n); ok {
		return float64(v), true
	}
	n = deref(n)
	if n.Kind != yaml.ScalarNode || n.Tag != "!!float" {
		return 0, false
	}
	v, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
	return v, err == nil && !math.IsInf(v, 0) && !math.IsNaN(v)
}

// roles checks every participant's own segdiff section (participants[] and
// participants_matrix.cl[] entries; the walk reports it anywhere else): its
// only key is role, a name of package diffusion's roles. A role other than
// relay is played by flags the participant's CL image gets from its
// client-patches entry (clients.yaml roles:), so the cl_image must be an
// @clients/ entry that maps it: `segdiff devnet up` refuses the rest, and the
// Kurtosis package cannot tell. A builder's participant stays relay.
func (r *run) roles(f *facts) {
	for _, e := range f.entries {
		if e.layer != "" && e.layer != "cl" {
			continue
		}
		for _, kv := range e.ps {
			if kv.key != clientpatch.ParticipantKey || isNull(kv.v) {
				continue
			}
			path := join(e.path, kv.key)
			sps, ok := r.pairs(kv.v, path)
			if !ok {
				continue
			}
			for _, q := range sps {
				if q.key != clientpatch.RoleKey {
					r.add(q.kn, join(path, q.key), "unknown key%s; the segdiff package fails: Invalid parameter %s, allowed fields: %v",
						didYouMean(q.key, ParticipantSegdiffKeys), join(path, q.key), ParticipantSegdiffKeys)
					continue
				}
				r.role(e, q.v, join(path, q.key))
			}
		}
	}
	r.builderRoles(f)
}

// role checks one segdiff.role against the entry's CL image.
func (r *run) role(e entry, n *yaml.Node, path string) {
	name := deref(n).Value
	if _, known := role.Lookup(name); !isString(n) || !known {
		names := role.Names()
		r.add(n, path, "unknown role %q; use one of %s%s", name, strings.Join(names, ", "), didYouMean(name, names))
		return
	}
	if name == role.Relay.Name {
		return
	}
	image, clType := "", "lighthouse"
	for _, kv := range e.ps {
		switch kv.key {
		case "cl_image":
			image = deref(kv.v).Value
		case "cl_type":
			clType = deref(kv.v).Value
		}
	}
	if r.c.clients == nil {
		r.add(n, path, "role %s is played by flags a client-patches entry maps it to, but no client manifest was loaded", name)
		return
	}
	ref, isRef := strings.CutPrefix(image, ClientsRefPrefix)
	switch {
	case image == "":
		r.add(n, path, "role %s needs a client with a flag for it, but cl_image is not set: ethereum-package's default %s image has none; clients with role flags in %s: %s",
			name, clType, r.c.clientsSource, r.roleClients())
	case !isRef:
		r.add(n, path, "role %s needs a client with a flag for it, but cl_image %s is not an @clients/ entry of %s; clients with role flags: %s",
			name, image, r.c.clientsSource, r.roleClients())
	default:
		entry, ok := r.c.clients[ref]
		if !ok {
			return // reported by client-refs
		}
		if !slices.Contains(entry.Roles, name) {
			has := strings.Join(entry.Roles, ", ")
			if has == "" {
				has = "none"
			}
			r.add(n, path, "client %s (cl_image %s) has no flag for role %s in %s (its roles: %s); clients with role flags: %s",
				ref, image, name, r.c.clientsSource, has, r.roleClients())
		}
	}
}

// roleClients lists the manifest entries with role flags, for messages:
// "prysm-segmented (mute, silent, withholder)".
func (r *run) roleClients() string {
	var out []string
	for name, c := range r.c.clients {
		if len(c.Roles) > 0 {
			out = append(out, fmt.Sprintf("%s (%s)", name, strings.Join(c.Roles, ", ")))
		}
	}
	if len(out) == 0 {
		return "none"
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// builderRoles: the stress roles are shares of the non-builder nodes; a role
// on the participant buildoor publishes through would have the builder's own
// node refuse requests for the payload it reveals.
func (r *run) builderRoles(f *facts) {
	if !f.has("buildoor") {
		return
	}
	seen := map[int64]bool{}
	for _, b := range f.builders() {
		if b < 1 || b > int64(len(f.participants)) || seen[b] {
			continue // reported by buildoor
		}
		seen[b] = true
		p := f.participants[b-1]
		sec, ok := p.keys[clientpatch.ParticipantKey]
		if !ok {
			continue
		}
		n := valueOf(sec.v, clientpatch.RoleKey)
		if r, known := role.Lookup(deref(n).Value); n == nil || !known || r.Honest() {
			continue
		}
		r.add(n, join(p.path(clientpatch.ParticipantKey), clientpatch.RoleKey),
			"participant %d (1-based, after count expansion) runs the builder (buildoor) and must stay relay: the roles are shares of the non-builder nodes, and a builder's node playing %s would refuse requests for the payload it reveals; give the builder its own participants entry",
			b, deref(n).Value)
	}
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
