package params

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	segmode "github.com/segdiff/segdiff/diffusion/mode"
)

// Rules on participants[] and participants_matrix entries.

// clientTypes: input_parser.star fails on a type without a default image
// when the entry gives none; with an image, the launcher dispatcher fails.
func (r *run) clientTypes(f *facts) {
	for _, e := range f.entries {
		images := map[string]bool{}
		for _, kv := range e.ps {
			if layer, ok := strings.CutSuffix(kv.key, "_image"); ok && deref(kv.v).Value != "" {
				images[layer] = true
			}
		}
		for _, kv := range e.ps {
			path := join(e.path, kv.key)
			switch kv.key {
			case "cl_type":
				r.clientType(kv.v, path, CLTypes, false, images["cl"])
			case "el_type":
				r.clientType(kv.v, path, ELTypes, true, images["el"])
			case "vc_type":
				if deref(kv.v).Value != "" {
					r.clientType(kv.v, path, VCTypes, false, images["vc"])
				}
			}
		}
	}
}

func (r *run) clientType(n *yaml.Node, path string, known []string, nullable, image bool) {
	v := deref(n).Value
	if nullable && (isNull(n) || strings.EqualFold(v, "none") || strings.EqualFold(v, "null")) {
		return
	}
	if slices.Contains(known, v) {
		return
	}
	real := fmt.Sprintf("%s received an empty image name and we don't have a default for it", v)
	if image {
		real = fmt.Sprintf("Unsupported launcher '%s'", v)
	}
	r.add(n, path, "unknown client type %q; ethereum-package %s accepts %s%s; it fails: %s",
		v, EthereumPackageCommit[:7], strings.Join(known, ", "), didYouMean(v, known), real)
}

// prometheusConfig: a user prometheus_config replaces the default dict
// wholesale, and the parser then reads both keys.
func (r *run) prometheusConfig(f *facts) {
	for _, e := range f.entries {
		for _, kv := range e.ps {
			if kv.key != "prometheus_config" {
				continue
			}
			path := join(e.path, kv.key)
			ps, ok := r.pairs(kv.v, path)
			if !ok {
				continue
			}
			have := map[string]bool{}
			for _, q := range ps {
				have[q.key] = true
			}
			for _, key := range []string{"scrape_interval", "labels"} {
				if !have[key] {
					r.add(kv.v, path, "give both scrape_interval and labels (labels: null is fine): ethereum-package replaces its default prometheus_config with this map and reads both, and fails: key %q not in dict", key)
					break
				}
			}
		}
	}
}

// logLevels: a launcher maps the participant's own <layer>_log_level, or
// else global_log_level, through its client's table (error, warn, info,
// debug, trace; custom for teku and besu) and fails when neither maps.
func (r *run) logLevels(f *facts) {
	g := f.topValue("global_log_level")
	if g == nil {
		return // "info"
	}
	global := deref(g).Value
	maps := func(client, level string) bool {
		return slices.Contains(LogLevels, level) || (level == "custom" && slices.Contains(CustomLogLevelClients, client))
	}
	for _, p := range f.participants {
		layers := [][2]string{{"cl", p.str("cl_type", "lighthouse")}}
		if el := p.str("el_type", "geth"); !strings.EqualFold(el, "none") && !strings.EqualFold(el, "null") && !isNull(p.keys["el_type"].v) {
			layers = append(layers, [2]string{"el", el})
		}
		for _, l := range layers {
			client := l[0] + "/" + l[1]
			if maps(client, p.str(l[0]+"_log_level", "")) || maps(client, global) {
				continue
			}
			allowed := slices.Clone(LogLevels)
			if slices.Contains(CustomLogLevelClients, client) {
				allowed = append(allowed, "custom")
			}
			sort.Strings(allowed)
			r.add(g, "global_log_level", "No participant log level defined, and the client log level has no mapping for global log level '%s' (%s %s has %s)%s",
				global, l[0], l[1], strings.Join(allowed, ", "), didYouMean(global, allowed))
			return // the package fails at the first
		}
	}
}

// clientRefs checks "@clients/<name>" images of each entry against the
// manifest: the entry exists, has the image's layer and was built for the
// entry's client type.
func (r *run) clientRefs(f *facts) {
	for _, e := range f.entries {
		types := map[string]string{"cl": "lighthouse", "el": "geth"}
		for _, kv := range e.ps {
			if layer, ok := strings.CutSuffix(kv.key, "_type"); ok {
				types[layer] = deref(kv.v).Value
			}
		}
		for _, kv := range e.ps {
			layer, isImage := strings.CutSuffix(kv.key, "_image")
			if !isImage || (layer != "cl" && layer != "el" && layer != "vc") {
				continue
			}
			ref, isRef := strings.CutPrefix(deref(kv.v).Value, ClientsRefPrefix)
			if !isRef {
				continue
			}
			path, img := join(e.path, kv.key), deref(kv.v).Value
			if r.c.clients == nil {
				r.add(kv.v, path, "%s refers to client-patches, but no client manifest was loaded", img)
				continue
			}
			entry, ok := r.c.clients[ref]
			if !ok {
				names := make([]string, 0, len(r.c.clients))
				for k := range r.c.clients {
					names = append(names, k)
				}
				sort.Strings(names)
				r.add(kv.v, path, "%s: no entry %q in %s (entries: %s)%s", img, ref, r.c.clientsSource, strings.Join(names, ", "), didYouMean(ref, names))
				continue
			}
			if layer == "vc" {
				continue // a VC image may come from the CL's entry
			}
			if entry.Layer != "" && entry.Layer != layer {
				r.add(kv.v, path, "%s is an image for the %s layer in %s, not %s", img, entry.Layer, r.c.clientsSource, layer)
			} else if entry.Type != "" && entry.Type != types[layer] && knownType(layer, types[layer]) {
				r.add(kv.v, path, "%s is built for %s_type %s, but this participant has %s_type %s", img, layer, entry.Type, layer, types[layer])
			}
		}
	}
}

// knownType reports whether typ is a valid type of layer; a misspelled type
// is reported once, by client-types, not again as a manifest mismatch.
func knownType(layer, typ string) bool {
	switch layer {
	case "cl":
		return slices.Contains(CLTypes, typ)
	case "el":
		return slices.Contains(ELTypes, typ)
	}
	return false
}

// clientModes: the CL images run the mode segdiff.mode declares (the
// suite's verdicts and reports are labelled with it), or, on a devnet that
// declares itself mixed (segdiff.mixed: true), whole-message diffusion
// beside it: unpatched clients next to patched ones, which a mixed devnet
// must both run.
func (r *run) clientModes(f *facts) {
	mode := string(segmode.Default)
	if n := valueOf(f.segdiff, "mode"); n != nil {
		mode = deref(n).Value
	}
	mixedNode := valueOf(f.segdiff, "mixed")
	mixed := mixedNode != nil && isBool(mixedNode) && deref(mixedNode).Value == "true"
	if !slices.Contains(segmode.ClientNames(), mode) || r.c.clients == nil {
		return // a bad mode is reported by the segdiff rule
	}
	runs := map[string]bool{}
	for _, e := range f.entries {
		for _, kv := range e.ps {
			ref, isRef := strings.CutPrefix(deref(kv.v).Value, ClientsRefPrefix)
			if kv.key != "cl_image" || !isRef {
				continue
			}
			entry, ok := r.c.clients[ref]
			if !ok || entry.Mode == "" {
				continue
			}
			runs[entry.Mode] = true
			if entry.Mode != mode && !(mixed && entry.Mode == string(segmode.Whole)) {
				r.add(kv.v, join(e.path, kv.key), "%s runs mode %s (%s), but segdiff.mode is %s", deref(kv.v).Value, entry.Mode, r.c.clientsSource, mode)
			}
		}
	}
	if mixed && (mode == string(segmode.Whole) || !runs[mode] || !runs[string(segmode.Whole)]) {
		r.add(mixedNode, join(SegdiffKey, "mixed"), "a mixed devnet runs %s clients beside whole-message ones, but its CL images run %s (segdiff.mode is %s)",
			mode, strings.Join(slices.Sorted(maps.Keys(runs)), " and "), mode)
	}
}
