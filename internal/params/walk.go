package params

import (
	"fmt"
	"slices"
	"sort"

	"gopkg.in/yaml.v3"

	"github.com/segdiff/segdiff/internal/clientpatch"
)

// RuleKeys names the problems of the key walk: keys not in keys.go's tables
// (sanity_check.star's "Invalid parameter ..." failures) and values of the
// wrong shape where a map or list is needed.
const RuleKeys = "keys"

// facts is what the key walk collects for the rules.
type facts struct {
	top     map[string]pair // top-level entries
	network map[string]pair // network_params entries
	segdiff *yaml.Node
	// entries are the participants[] items and participants_matrix.<layer>[]
	// items, each checked against its key table.
	entries []entry
	// participants are expanded as input_parser.parse_network_params does.
	participants []participant
	// uncounted: a count is not an integer, so the expansion is unknown
	// (value-types reports it; the run fails expanding it).
	uncounted bool
	services  []service // additional_services
	// servicesBad: additional_services is not a list (value-types reports
	// it; the package fails iterating it before any rule reads it).
	servicesBad bool
}

// entry is one participants[] or participants_matrix.<layer>[] item.
type entry struct {
	path  string
	n     *yaml.Node
	ps    []pair
	layer string // "" for participants[], else el, cl, vc or remote_signer
}

// participant is one expanded participant: the merged keys of its entries
// (a matrix combination merges el, cl, vc, remote_signer in that order).
type participant struct {
	keys map[string]pair
	from map[string]string // key -> path of the entry it came from
}

// service is one additional_services item.
type service struct {
	name string
	n    *yaml.Node
	path string
}

// str returns the participant's key as a string, or def when unset.
func (p participant) str(key, def string) string {
	if kv, ok := p.keys[key]; ok && !isNull(kv.v) {
		return deref(kv.v).Value
	}
	return def
}

// validators is the participant's validator_count, or def when unset or
// null; false when it is set to something else than an integer (reported by
// value-types: the package fails summing it).
func (p participant) validators(def int64) (int64, bool) {
	kv, ok := p.keys["validator_count"]
	if !ok || isNull(kv.v) {
		return def, true
	}
	return intOf(kv.v)
}

// path returns the key path of key in the entry it came from.
func (p participant) path(key string) string { return join(p.from[key], key) }

func (f *facts) networkValue(key string) *yaml.Node {
	if kv, ok := f.network[key]; ok {
		return kv.v
	}
	return nil
}

func (f *facts) topValue(key string) *yaml.Node {
	if kv, ok := f.top[key]; ok {
		return kv.v
	}
	return nil
}

func (f *facts) has(service string) bool {
	for _, s := range f.services {
		if s.name == service {
			return true
		}
	}
	return false
}

// pairs returns the entries of a mapping, or reports that n is not one.
func (r *run) pairs(n *yaml.Node, path string) ([]pair, bool) {
	ps, ok := pairsOf(n)
	if !ok {
		r.add(n, path, "must be a map, got %s", kindName(n))
	}
	return ps, ok
}

// items returns the items of a sequence (none for null), or reports that n
// is not one.
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

// knownKeys reports every key of ps not in allowed, with the message
// sanity_check.star fails with (real: its text up to the allowed list).
func (r *run) knownKeys(ps []pair, path string, allowed []string, real string) {
	for _, p := range ps {
		if !slices.Contains(allowed, p.key) {
			r.add(p.kn, join(path, p.key), "unknown key%s; ethereum-package fails: %s", didYouMean(p.key, allowed), fmt.Sprintf(real, p.key))
		}
	}
}

// walk checks every key of the document against the tables and collects
// the facts the rules need; false when the document is not a map.
func (r *run) walk(root *yaml.Node) (*facts, bool) {
	ps, ok := r.pairs(root, "(document)")
	if !ok {
		return nil, false
	}
	f := &facts{top: map[string]pair{}, network: map[string]pair{}}
	r.knownKeys(ps, "", append(TopLevelKeys(), SegdiffKey), "Invalid parameter %s, allowed fields [...]")
	for _, p := range ps {
		f.top[p.key] = p
		switch p.key {
		case SegdiffKey:
			f.segdiff = p.v
			r.segdiffKeys(p.v)
		case "participants", "participants_matrix":
			// expanded below, once both are known
		case "port_publisher":
			r.portPublisher(p.v)
		case "additional_services":
			f.services = r.additionalServices(f, p.v)
		default:
			keys, isBlock := BlockKeys[p.key]
			if !isBlock {
				continue
			}
			bps, ok := r.pairs(p.v, p.key)
			if !ok {
				continue
			}
			r.knownKeys(bps, p.key, keys, "Invalid parameter %s for "+p.key+". Allowed fields: [...]")
			if nested, ok := NestedBlocks[p.key]; ok {
				r.nestedBlock(p.key, bps, nested)
			}
			if p.key == "network_params" {
				for _, q := range bps {
					f.network[q.key] = q
				}
			}
		}
	}
	f.participants = r.expand(f)
	return f, true
}

// nestedBlock applies validate_nested_params: top-level keys one of Special
// or Sub's keys, and each Sub block against its list.
func (r *run) nestedBlock(block string, ps []pair, nested NestedBlock) {
	allowed := slices.Clone(nested.Special)
	for k := range nested.Sub {
		allowed = append(allowed, k)
	}
	sort.Strings(allowed)
	for _, p := range ps {
		// Keys BlockKeys rejects were reported already.
		if !slices.Contains(allowed, p.key) && slices.Contains(BlockKeys[block], p.key) {
			r.add(p.kn, join(block, p.key), "unknown key%s; ethereum-package fails: Invalid parameter %s for %s, allowed fields: %v",
				didYouMean(p.key, allowed), p.key, block, allowed)
		}
		sub, isSub := nested.Sub[p.key]
		if !isSub {
			continue
		}
		if sps, ok := r.pairs(p.v, join(block, p.key)); ok {
			r.knownKeys(sps, join(block, p.key), sub, "Invalid parameter %s for "+p.key+". Allowed fields: [...]")
		}
	}
}

// expand checks participants[] and participants_matrix and returns the
// participants ethereum-package launches, in its order: participants[]
// then the matrix's el x cl x vc x remote_signer x count combinations (an
// absent el or cl list yields none), each repeated its own count times;
// with neither key, one default participant.
func (r *run) expand(f *facts) []participant {
	var list []participant
	pp, given := f.top["participants"]
	mp, matrix := f.top["participants_matrix"]
	if given {
		items, _ := r.items(pp.v, "participants")
		for i, item := range items {
			path := fmt.Sprintf("participants[%d]", i)
			ps, ok := r.pairs(item, path)
			if !ok {
				continue
			}
			r.knownKeys(ps, path, append(slices.Clone(ParticipantKeys), clientpatch.ParticipantKey), "Invalid parameter %s for participants. Allowed fields: [...]")
			f.entries = append(f.entries, entry{path: path, n: item, ps: ps})
			list = append(list, merge(entry{path: path, ps: ps}))
		}
	} else if !matrix {
		list = []participant{{keys: map[string]pair{}, from: map[string]string{}}}
	}
	if matrix {
		list = append(list, r.matrix(mp.v, f)...)
	}
	var out []participant
	for _, p := range list {
		count := int64(1)
		if kv, ok := p.keys["count"]; ok {
			v, ok := intOf(kv.v)
			switch {
			case !ok:
				f.uncounted = true // reported by value-types
			case v < 0:
				r.add(kv.v, p.path("count"), "must be >= 0, got %d", v)
			default:
				count = v
			}
		}
		for range count {
			out = append(out, p)
		}
	}
	return out
}

// matrix checks participants_matrix and returns its merged combinations.
func (r *run) matrix(n *yaml.Node, f *facts) []participant {
	ps, ok := r.pairs(n, "participants_matrix")
	if !ok {
		return nil
	}
	allowed := make([]string, 0, len(ParticipantMatrixKeys))
	for k := range ParticipantMatrixKeys {
		allowed = append(allowed, k)
	}
	sort.Strings(allowed)
	r.knownKeys(ps, "participants_matrix", allowed, "Invalid parameter %s for participants_matrix, allowed fields: [...]")
	layers := map[string][]entry{}
	present := map[string]bool{}
	count := int64(1)
	for _, p := range ps {
		path := join("participants_matrix", p.key)
		if p.key == "count" {
			if v, ok := intOf(p.v); ok {
				count = max(v, 0)
			} else {
				r.add(p.v, path, "must be an integer, got %s; ethereum-package fails: participants_matrix count must be an integer", kindName(p.v))
			}
			continue
		}
		keys, known := ParticipantMatrixKeys[p.key]
		if !known {
			continue
		}
		present[p.key] = true
		items, ok := r.items(p.v, path)
		if !ok {
			continue
		}
		for i, item := range items {
			ip := fmt.Sprintf("%s[%d]", path, i)
			ips, ok := r.pairs(item, ip)
			if !ok {
				continue
			}
			allowed := keys
			if p.key == "cl" {
				// The beacon node's entry may carry our segdiff section too.
				allowed = append(slices.Clone(keys), clientpatch.ParticipantKey)
			}
			r.knownKeys(ips, ip, allowed, "Invalid parameter %s for "+p.key+". Allowed fields: [...]")
			e := entry{path: ip, n: item, ps: ips, layer: p.key}
			f.entries = append(f.entries, e)
			layers[p.key] = append(layers[p.key], e)
		}
	}
	orEmpty := func(es []entry) []entry {
		if len(es) == 0 {
			return []entry{{}}
		}
		return es
	}
	var out []participant
	for _, el := range layers["el"] {
		for _, cl := range layers["cl"] {
			for _, vc := range orEmpty(layers["vc"]) {
				for _, rs := range orEmpty(layers["remote_signer"]) {
					for range count {
						out = append(out, merge(el, cl, vc, rs))
					}
				}
			}
		}
	}
	return out
}

// merge builds a participant from entries, later keys overriding earlier.
func merge(es ...entry) participant {
	p := participant{keys: map[string]pair{}, from: map[string]string{}}
	for _, e := range es {
		for _, kv := range e.ps {
			p.keys[kv.key] = kv
			p.from[kv.key] = e.path
		}
	}
	return p
}

func (r *run) portPublisher(n *yaml.Node) {
	ps, ok := r.pairs(n, "port_publisher")
	if !ok {
		return
	}
	r.knownKeys(ps, "port_publisher", append([]string{"nat_exit_ip"}, PortPublisherGroups...), "Invalid parameter %s for port_publisher, allowed fields: [...]")
	for _, p := range ps {
		if slices.Contains(PortPublisherGroups, p.key) {
			if gps, ok := r.pairs(p.v, join("port_publisher", p.key)); ok {
				r.knownKeys(gps, join("port_publisher", p.key), PortPublisherGroupKeys, "Invalid parameter %s for "+p.key+". Allowed fields: [...]")
			}
		}
	}
}

// additionalServices checks additional_services' items; the list itself is
// typed by value-types.
func (r *run) additionalServices(f *facts, n *yaml.Node) []service {
	if deref(n).Kind != yaml.SequenceNode {
		f.servicesBad = true
		return nil
	}
	var out []service
	for i, item := range deref(n).Content {
		path := fmt.Sprintf("additional_services[%d]", i)
		if deref(item).Kind != yaml.ScalarNode {
			r.add(item, path, "must be a service name, got %s", kindName(item))
			continue
		}
		name := deref(item).Value
		out = append(out, service{name: name, n: item, path: path})
		if !slices.Contains(AdditionalServices, name) {
			r.add(item, path, "unknown additional service %q%s; ethereum-package fails: Invalid additional_services %s, allowed fields: [...]",
				name, didYouMean(name, AdditionalServices), name)
		}
	}
	return out
}

// segdiffKeys checks the segdiff section's keys against SegdiffKeys.
func (r *run) segdiffKeys(n *yaml.Node) {
	ps, ok := r.pairs(n, SegdiffKey)
	if !ok {
		return
	}
	allowed := make([]string, 0, len(SegdiffKeys))
	for k := range SegdiffKeys {
		allowed = append(allowed, k)
	}
	sort.Strings(allowed)
	for _, p := range ps {
		path := join(SegdiffKey, p.key)
		keys, known := SegdiffKeys[p.key]
		if !known {
			r.add(p.kn, path, "unknown key%s; the segdiff package fails: Invalid parameter %s, allowed fields: %v", didYouMean(p.key, allowed), path, allowed)
			continue
		}
		if keys == nil {
			continue // a scalar, checked by its rule
		}
		if sps, ok := r.pairs(p.v, path); ok {
			for _, q := range sps {
				if !slices.Contains(keys, q.key) {
					r.add(q.kn, join(path, q.key), "unknown key%s; the segdiff package fails: Invalid parameter %s, allowed fields: %v",
						didYouMean(q.key, keys), join(path, q.key), keys)
				}
			}
		}
	}
}
