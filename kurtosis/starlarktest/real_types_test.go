package starlarktest_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/segdiff/segdiff/kurtosis/starlarktest"
	"github.com/segdiff/segdiff/params"
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
// must fail with the rule's Fails (or our package's message, for a Segdiff
// rule), or, for a rule that names no failure, succeed. A truth-tested key
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
				if !strings.Contains(got, rule.Fails) {
					t.Errorf("the real run of\n%s\n%.800s\nwant an error containing %q", src, got, rule.Fails)
				}
			case rule.Segdiff:
				if w := path + " " + want; !strings.Contains(got, w) {
					t.Errorf("the real run: %.800s\nwant an error containing %q", got, w)
				}
			default:
				if strings.HasPrefix(got, "error: ") {
					t.Errorf("the rule names no failure, but the real run of\n%s\nfails: %.800s", src, got)
				}
			}
		})
	}
}

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
