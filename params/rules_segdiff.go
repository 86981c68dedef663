package params

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// The segdiff section: its keys are checked by the walk against
// SegdiffKeys; segdiffSections checks each subsection's values, mirroring
// kurtosis/src/package_io/input_parser.star. A new subsection adds its keys
// to SegdiffKeys and, if its values need checking, a function here.
var segdiffSections = map[string]func(r *run, f *facts, n *yaml.Node, path string){
	"mode":         (*run).segdiffMode,
	"prometheus":   (*run).segdiffPrometheus,
	"grafana":      (*run).segdiffGrafana,
	"link_classes": (*run).linkClasses,
	"load":         (*run).segdiffLoad,
}

// segdiffLoad checks segdiff.load (params/load.go).
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
	if v := deref(n).Value; !slices.Contains(SegdiffModes, v) {
		r.add(n, path, "unknown mode %q; use one of %s%s", v, strings.Join(SegdiffModes, ", "), suggest(v, SegdiffModes))
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
			r.add(v, p, "unknown link class %q; use one of %s%s", c, strings.Join(LinkClasses, ", "), suggest(c, LinkClasses))
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
						case !ok:
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
			r.knownKeys(cps, kp, LinkClassCustomKeys, "Invalid parameter %s, allowed fields: [up_mbps down_mbps latency_ms]")
			for _, q := range cps {
				if !slices.Contains(LinkClassCustomKeys, q.key) {
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
