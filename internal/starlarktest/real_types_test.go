package starlarktest_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/segdiff/segdiff/internal/params"
	"github.com/segdiff/segdiff/internal/starlarktest"
)

// typeDoc is a network-params file as maps, for the type-rule walk.
type typeDoc struct {
	participant map[string]any
	network     map[string]any
	top         map[string]any
}

func newTypeDoc() typeDoc {
	return typeDoc{
		participant: map[string]any{"cl_type": "prysm", "el_type": "geth", "count": 2, "supernode": true},
		network:     map[string]any{},
		top:         map[string]any{},
	}
}

// set puts value at the rule's key.
func (d typeDoc) set(r params.TypeRule, value any) {
	switch r.Section {
	case params.SectionParticipant:
		d.participant[r.Key] = value
	case params.SectionNetwork:
		d.network[r.Key] = value
	default:
		d.top[r.Key] = value
	}
}

func (d typeDoc) yaml(t *testing.T) string {
	t.Helper()
	doc := map[string]any{"participants": []any{d.participant}}
	if len(d.network) > 0 {
		doc["network_params"] = d.network
	}
	for k, v := range d.top {
		doc[k] = v
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// typeRuleContexts make the code a rule's When names run for the walk's
// participant (prysm and geth, a separate VC by default), or make a truth
// test matter; nil when the participant gets there already. Every rule with
// a When needs an entry.
var typeRuleContexts = map[string]func(d typeDoc){
	"participants[].el_extra_params":             nil,
	"participants[].vc_extra_params":             nil,
	"participants[].vc_beacon_node_indices":      nil,
	"participants[].el_min_cpu":                  nil,
	"participants[].el_max_cpu":                  nil,
	"participants[].el_min_mem":                  nil,
	"participants[].el_max_mem":                  nil,
	"participants[].vc_min_cpu":                  nil,
	"participants[].vc_max_cpu":                  nil,
	"participants[].vc_min_mem":                  nil,
	"participants[].vc_max_mem":                  nil,
	"participants[].remote_signer_extra_params":  remoteSigner,
	"participants[].remote_signer_min_cpu":       remoteSigner,
	"participants[].remote_signer_max_cpu":       remoteSigner,
	"participants[].remote_signer_min_mem":       remoteSigner,
	"participants[].remote_signer_max_mem":       remoteSigner,
	"participants[].blobber_extra_params":        func(d typeDoc) { d.participant["blobber_enabled"] = true },
	"participants[].el_force_restart":            binaryPath("el"),
	"participants[].cl_force_restart":            binaryPath("cl"),
	"participants[].vc_force_restart":            binaryPath("vc"),
	"participants[].el_volume_size":              persistent,
	"participants[].cl_volume_size":              persistent,
	"network_params.num_validator_keys_per_node": nil,
	"network_params.genesis_delay":               nil,
	"network_params.gas_limit":                   nil,
	// main.star returns before the finality wait without additional services.
	"wait_for_finalization": func(d typeDoc) { d.top["additional_services"] = []any{"dora"} },
}

func remoteSigner(d typeDoc) { d.participant["use_remote_signer"] = true }
func persistent(d typeDoc)   { d.top["persistent"] = true }

// binaryPath mounts a file of the checkout (read relative to its src/) as
// the layer's binary, so the truth test of <layer>_force_restart matters.
func binaryPath(layer string) func(d typeDoc) {
	return func(d typeDoc) { d.participant[layer+"_binary_path"] = "README.md" }
}

func init() {
	for n := 1; n <= 5; n++ {
		max, target := fmt.Sprintf("bpo_%d_max_blobs", n), fmt.Sprintf("bpo_%d_target_blobs", n)
		typeRuleContexts["network_params."+max] = func(d typeDoc) { d.network[target] = 0 }
		typeRuleContexts["network_params."+target] = func(d typeDoc) { d.network[max] = 0 }
	}
}

// TestRealTypeRules walks params.TypeRules through the real ethereum-package
// under our package, each key set to the string "12" where the walk's
// participant (with the rule's context) reaches the code the rule names:
// the checker must report the key with the rule's message, and the real run
// must fail with exactly the rule's Fails (or our package's message, for a
// Segdiff rule), or, for a rule that names no failure, succeed. A truth-tested key
// set to "false" must run exactly as with true: the proof that any
// non-empty string is true there.
func TestRealTypeRules(t *testing.T) {
	b := realBackend(t)
	paths := map[string]bool{}
	for _, rule := range params.TypeRules {
		paths[rule.Path()] = true
	}
	for path := range typeRuleContexts {
		if !paths[path] {
			t.Errorf("typeRuleContexts has %s, which is no rule of params.TypeRules", path)
		}
	}
	checker := params.New()
	for _, rule := range params.TypeRules {
		t.Run(rule.Path(), func(t *testing.T) {
			ctx, hasCtx := typeRuleContexts[rule.Path()]
			if rule.When != "" && !hasCtx {
				t.Fatalf("rule %s applies %s: give typeRuleContexts a context that makes it apply (nil if the walk's participant does)", rule.Path(), rule.When)
			}
			doc := func(value any) string {
				d := newTypeDoc()
				if ctx != nil {
					ctx(d)
				}
				d.set(rule, value)
				return d.yaml(t)
			}
			value := "12"
			if rule.Type == params.TypeBool {
				value = "false"
			}
			src := doc(value)
			want := rule.Message("string", value)
			path := strings.Replace(rule.Path(), "participants[]", "participants[0]", 1)
			var found []string
			for _, p := range checker.Check("x.yaml", []byte(src)) {
				found = append(found, p.String())
				if p.Path == path && p.Msg == want {
					found = nil
					break
				}
			}
			if found != nil {
				t.Fatalf("the checker does not report %s: %s\nfor\n%s\nit reports:\n%s", path, want, src, strings.Join(found, "\n"))
			}

			got := realOutcome(t, b, src)
			switch {
			case rule.Type == params.TypeBool:
				asTrue, asFalse := realOutcome(t, b, doc(true)), realOutcome(t, b, doc(false))
				switch {
				case rule.EqualsTrue:
					if got == asTrue || got == asFalse {
						t.Errorf("%s: \"false\" runs as true (%v) or as false (%v); the rule says a string is read both ways", path, got == asTrue, got == asFalse)
					}
				case got != asTrue:
					t.Errorf("%s: \"false\" does not run as true:\n\"false\": %.600s\ntrue:    %.600s", path, got, asTrue)
				case got == asFalse:
					t.Errorf("%s: true and false run alike here; give typeRuleContexts a context where the truth test matters", path)
				}
			case rule.Fails != "":
				if first, w := firstLine(got), "error: "+rule.FailsFor(value); first != w {
					t.Errorf("the real run of\n%s\nfails with %q\nwant      %q", src, first, w)
				}
			case rule.Segdiff:
				if first, w := firstLine(got), "error: fail: "+path+" "+want; first != w {
					t.Errorf("the real run fails with %q\nwant      %q", first, w)
				}
			default:
				if strings.HasPrefix(got, "error: ") {
					t.Errorf("the rule names no failure, but the real run of\n%s\nfails: %.800s", src, got)
				}
			}
		})
	}
}

func firstLine(s string) string { return strings.SplitN(s, "\n", 2)[0] }

// realOutcome is a run's error, or its services and instructions as JSON.
func realOutcome(t *testing.T, b backend, src string) string {
	t.Helper()
	p, _, err := runWith(t, b, src, "docker", false)
	if err != nil {
		return "error: " + err.Error()
	}
	return planDigest(t, p)
}

func planDigest(t *testing.T, p *starlarktest.Plan) string {
	t.Helper()
	// Instruction names only: their arguments echo the values (a label
	// "supernode": "false", force_update="false").
	var calls []string
	for _, in := range p.Instructions {
		calls = append(calls, in.Name)
	}
	out, err := json.Marshal(struct {
		Services  map[string]*starlarktest.Service
		Artifacts map[string]*starlarktest.Artifact
		Calls     []string
	}{p.Services, p.Artifacts, calls})
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// notComputed are the keys with a number or boolean default that
// ethereum-package only copies into a config template or hands on, with
// where: they have no type rule. TestRealTypeRulesCoverDefaults fails on
// any other untyped key with such a default.
var notComputed = map[string]string{
	"network_params.genesis_gaslimit":                             "the genesis config (GenesisGasLimit)",
	"network_params.max_per_epoch_activation_churn_limit":         "the genesis config",
	"network_params.churn_limit_quotient":                         "the genesis config",
	"network_params.confirmation_byzantine_threshold":             "the genesis config",
	"network_params.ejection_balance":                             "the genesis config",
	"network_params.eth1_follow_distance":                         "the genesis config",
	"network_params.min_validator_withdrawability_delay":          "the genesis config",
	"network_params.min_builder_withdrawability_delay":            "the genesis config",
	"network_params.deploy_eip8282_contracts":                     "the genesis config (DEPLOY_EIP8282_CONTRACTS={{ . }})",
	"network_params.shard_committee_period":                       "the genesis config",
	"network_params.samples_per_slot":                             "the genesis config",
	"network_params.custody_requirement":                          "the genesis config",
	"network_params.max_blobs_per_block_electra":                  "the genesis config",
	"network_params.target_blobs_per_block_electra":               "the genesis config",
	"network_params.max_request_blocks_deneb":                     "the genesis config",
	"network_params.base_fee_update_fraction_electra":             "the genesis config",
	"network_params.max_payload_size":                             "the genesis config",
	"network_params.min_epochs_for_data_column_sidecars_requests": "the genesis config",
	"network_params.bpo_1_base_fee_update_fraction":               "the genesis config",
	"network_params.bpo_2_base_fee_update_fraction":               "the genesis config",
	"network_params.bpo_3_base_fee_update_fraction":               "the genesis config",
	"network_params.bpo_4_base_fee_update_fraction":               "the genesis config",
	"network_params.bpo_5_base_fee_update_fraction":               "the genesis config",
	"nginx_port": "the nginx service's port (nginx/nginx_launcher.star)",
	// A top-level default that sanity_check.star does not accept as a key.
	"use_remote_signer": "not a top-level key",
}

// TestRealTypeRulesCoverDefaults: every participant, network_params and
// top-level key whose default in the real input_parser.star is a number or
// a boolean has a type rule of that kind (or is in notComputed), and a
// rule is Nullable exactly when the default is None.
func TestRealTypeRulesCoverDefaults(t *testing.T) {
	rp := realPackage(t)
	r, err := starlarktest.New(packageDir, rp.Options()...)
	if err != nil {
		t.Fatal(err)
	}
	const parser = starlarktest.EthereumPackageName + "/src/package_io/input_parser.star"
	call := func(fn string, args ...any) map[string]any {
		v, err := r.Call(parser, fn, args...)
		if err != nil {
			t.Fatal(err)
		}
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%s() returned %T, want a dict", fn, v)
		}
		return m
	}
	defaults := map[params.Section]map[string]any{
		params.SectionParticipant: call("default_participant"),
		params.SectionNetwork:     call("default_network_params"),
		params.SectionTop:         call("default_input_args", map[string]any{}),
	}
	for _, rule := range params.TypeRules {
		def, ok := defaults[rule.Section][rule.Key]
		if !ok {
			if rule.Section != params.SectionTop {
				t.Errorf("%s has a type rule, but the real defaults have no %s", rule.Path(), rule.Key)
			}
			continue // additional_services has no default entry
		}
		if (def == nil) != rule.Nullable {
			t.Errorf("%s: the real default is %v, but the rule has Nullable %v", rule.Path(), def, rule.Nullable)
		}
	}
	for section, keys := range defaults {
		for key, def := range keys {
			path := params.TypeRule{Section: section, Key: key}.Path()
			var kinds []params.Type
			switch def.(type) {
			case bool:
				kinds = []params.Type{params.TypeBool}
			case json.Number:
				kinds = []params.Type{params.TypeInt, params.TypeUint, params.TypeBPS, params.TypeNumber}
			default:
				continue
			}
			rule, typed := ruleAt(section, key)
			_, excluded := notComputed[path]
			switch {
			case typed && excluded:
				t.Errorf("%s has a type rule and is in notComputed", path)
			case typed && !slices.Contains(kinds, rule.Type):
				t.Errorf("%s: the real default %v does not have the rule's type", path, def)
			case !typed && !excluded:
				t.Errorf("%s: the real default is %v, but it has no type rule and is not in notComputed: read what the package does with it and classify it", path, def)
			}
		}
	}
	for path := range notComputed {
		section, key := params.SectionTop, path
		if k, ok := strings.CutPrefix(path, "network_params."); ok {
			section, key = params.SectionNetwork, k
		}
		if _, ok := defaults[section][key]; !ok {
			t.Errorf("notComputed has %s, which the real defaults do not", path)
		}
	}
}

func ruleAt(section params.Section, key string) (params.TypeRule, bool) {
	for _, r := range params.TypeRules {
		if r.Section == section && r.Key == key {
			return r, true
		}
	}
	return params.TypeRule{}, false
}
