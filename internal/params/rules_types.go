package params

import (
	"fmt"
	"slices"

	"gopkg.in/yaml.v3"
)

// valueTypes checks the keys of TypeRules wherever they are given: every
// participants[] and participants_matrix entry, network_params and the top
// level.
func (r *run) valueTypes(f *facts) {
	appended := f.appendedExtraParams()
	for _, e := range f.entries {
		for _, kv := range e.ps {
			if t, ok := typeRule(SectionParticipant, kv.key); ok {
				path := join(e.path, kv.key)
				r.typed(t, kv.v, path, appended[path])
			}
		}
	}
	for key, kv := range f.network {
		if t, ok := typeRule(SectionNetwork, key); ok {
			r.typed(t, kv.v, "network_params."+key, "")
		}
	}
	for key, kv := range f.top {
		if t, ok := typeRule(SectionTop, key); ok {
			r.typed(t, kv.v, key, "")
		}
	}
}

// typed reports n at path unless it has t's type; fails, when not "", is
// what the run fails with instead of t.Fails.
func (r *run) typed(t TypeRule, n *yaml.Node, path, fails string) {
	if isNull(n) {
		// null is a truth test's false, or selects the default.
		if !t.Nullable && t.Type != TypeBool {
			r.add(n, path, "%s", t.message("NoneType", "", fails))
		}
		return
	}
	ok := false
	switch t.Type {
	case TypeInt, TypeBPS:
		var v int64
		if v, ok = intOf(n); ok && t.Type == TypeBPS && (v < 0 || v > 10000) {
			r.add(n, path, "must be basis points of a slot, 0..10000, got %d", v)
		}
	case TypeUint:
		_, ok = uintOf(n)
	case TypeNumber:
		_, ok = floatOf(n)
	case TypeBool:
		ok = isBool(n)
	case TypeList:
		if ok = deref(n).Kind == yaml.SequenceNode; ok {
			r.listItems(t, deref(n).Content, path)
		}
	}
	if !ok {
		r.add(n, path, "%s", t.message(typeName(n), deref(n).Value, fails))
	}
}

// listItems checks the items of a TypeList with an item type.
func (r *run) listItems(t TypeRule, items []*yaml.Node, path string) {
	for i, item := range items {
		var ok bool
		switch t.Items {
		case 0:
			ok = true
		case TypeInt:
			_, ok = intOf(item)
		case TypeString:
			ok = isString(item)
		}
		if !ok {
			want := map[Type]string{TypeInt: "an integer", TypeString: "a string"}[t.Items]
			r.add(item, fmt.Sprintf("%s[%d]", path, i), "every item must be %s, got %s", want, got(typeName(item), deref(item).Value))
		}
	}
}

// appendedExtraParams returns, by key path, the cl_extra_params and
// vc_extra_params values input_parser.star appends a flag to before a
// launcher iterates them, with what a string there fails with: a lone
// lodestar, disable_peer_scoring, a mev_type, and the participants buildoor
// builds on get builder flags (enrich_disable_peer_scoring,
// apply_external_builder_flags, apply_buildoor_payload_attributes_flags).
func (f *facts) appendedExtraParams() map[string]string {
	const noAppend = "string has no .append field or method"
	out := map[string]string{}
	mark := func(p participant, key string) {
		if kv, ok := p.keys[key]; ok && isString(kv.v) {
			out[p.path(key)] = noAppend
		}
	}
	builder := func(p participant, payloadAttributes bool) {
		cl, vc := p.str("cl_type", "lighthouse"), p.vcType()
		if slices.Contains([]string{"lighthouse", "lodestar", "nimbus", "teku", "prysm", "grandine"}, cl) {
			mark(p, "cl_extra_params")
		}
		if slices.Contains([]string{"lodestar", "nimbus", "teku", "prysm", "vero"}, vc) || (vc == "lighthouse" && f.gasLimitZero()) {
			mark(p, "vc_extra_params")
		}
		if payloadAttributes && slices.Contains([]string{"lodestar", "prysm", "lighthouse", "grandine", "consensoor", "teku"}, cl) {
			mark(p, "cl_extra_params")
		}
	}
	for i, p := range f.participants {
		cl := p.str("cl_type", "lighthouse")
		if len(f.participants) == 1 && cl == "lodestar" {
			mark(p, "cl_extra_params") // run as a single node
		}
		if truthy(f.topValue("disable_peer_scoring")) && slices.Contains([]string{"lighthouse", "prysm", "teku", "lodestar", "grandine"}, cl) {
			mark(p, "cl_extra_params")
		}
		if mev := f.topValue("mev_type"); isString(mev) && slices.Contains(MEVTypes, deref(mev).Value) {
			builder(p, deref(mev).Value == "buildoor" && i == 0)
		}
	}
	if mev := f.topValue("mev_type"); f.has("buildoor") && (mev == nil || isNull(mev)) {
		for _, b := range f.builders() {
			if b >= 1 && b <= int64(len(f.participants)) {
				builder(f.participants[b-1], true)
			}
		}
	}
	return out
}

// vcType is the participant's VC client as input_parser.star resolves it.
func (p participant) vcType() string {
	if vc := p.str("vc_type", ""); vc != "" {
		return vc
	}
	if cl := p.str("cl_type", "lighthouse"); cl != "caplin" {
		return cl
	}
	return "lighthouse"
}

// gasLimitZero: network_params.gas_limit as the parser sees it is 0 (unset,
// and Gloas not scheduled: it defaults to 200000000 with Gloas).
func (f *facts) gasLimitZero() bool {
	if n := f.networkValue("gas_limit"); n != nil {
		v, ok := intOf(n)
		return ok && v == 0
	}
	gloas, _, _ := f.epoch("gloas_fork_epoch", FarFutureEpoch)
	return gloas == FarFutureEpoch
}

// builders are the 1-based participants buildoor builds on: the
// instances' participants, or participant 1 without instances.
func (f *facts) builders() []int64 {
	items := deref(valueOf(f.topValue("buildoor_params"), "instances"))
	if items.Kind != yaml.SequenceNode || len(items.Content) == 0 {
		return []int64{1}
	}
	var out []int64
	for _, item := range items.Content {
		if v, ok := intOf(valueOf(item, "participant")); ok {
			out = append(out, v)
		}
	}
	return out
}
