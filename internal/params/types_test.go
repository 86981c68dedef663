package params_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/segdiff/segdiff/internal/params"
)

// typeDoc places value at a rule's key in an otherwise valid file.
func typeDoc(r params.TypeRule, value string) (doc, path string) {
	participant := "{cl_type: prysm, el_type: geth, count: 2, supernode: true}"
	if r.Key == "perfect_peerdas_enabled" {
		// A string is true: with fewer than 16 participants the custody
		// rule reports the package's failure too.
		participant = "{cl_type: prysm, el_type: geth, count: 16, supernode: true}"
	}
	switch r.Section {
	case params.SectionParticipant:
		if r.Key == "supernode" {
			participant = "{cl_type: prysm, el_type: geth, count: 2}"
		}
		participant = strings.TrimSuffix(participant, "}") + ", " + r.Key + ": " + value + "}"
		return "participants:\n  - " + participant + "\n", "participants[0]." + r.Key
	case params.SectionNetwork:
		return "participants:\n  - " + participant + "\nnetwork_params:\n  " + r.Key + ": " + value + "\n", "network_params." + r.Key
	}
	return "participants:\n  - " + participant + "\n" + r.Key + ": " + value + "\n", r.Key
}

// TestTypeRules walks params.TypeRules: every key takes a value of its type,
// and a quoted one is reported, alone, with the rule's message — naming what
// the run fails with where the rule says (the real-package mode of
// internal/starlarktest proves those messages against the real package).
func TestTypeRules(t *testing.T) {
	valid := map[params.Type]string{
		params.TypeInt: "1", params.TypeUint: "0", params.TypeBPS: "5000", params.TypeNumber: "1.5",
		params.TypeBool: "true", params.TypeList: "[]",
	}
	// Valid values of another type for keys a rule of their own reads.
	validFor := map[string]string{
		"network_params.slot_duration_ms": "12000", "network_params.seconds_per_slot": "12",
		"network_params.gloas_fork_epoch": "18446744073709551615", "network_params.heze_fork_epoch": "18446744073709551615",
		"network_params.perfect_peerdas_enabled": "false", "network_params.builder_count": "0",
	}
	seen := map[string]bool{}
	for _, r := range params.TypeRules {
		t.Run(r.Path(), func(t *testing.T) {
			if seen[r.Path()] {
				t.Fatalf("%s has two rules", r.Path())
			}
			seen[r.Path()] = true
			if r.Uses == "" {
				t.Errorf("%s: Uses does not say which code reads it", r.Path())
			}
			if r.Section == params.SectionParticipant && !slices.Contains(params.ParticipantKeys, r.Key) ||
				r.Section == params.SectionNetwork && !slices.Contains(params.NetworkParamsKeys, r.Key) ||
				r.Section == params.SectionTop && !slices.Contains(append(params.TopLevelKeys(), "additional_services"), r.Key) {
				t.Errorf("%s is not a key of the key tables", r.Path())
			}
			good := valid[r.Type]
			if v, ok := validFor[r.Path()]; ok {
				good = v
			}
			doc, _ := typeDoc(r, good)
			for _, p := range params.New().Check("x.yaml", []byte(doc)) {
				t.Errorf("%s: %s", good, p)
			}

			value := "12"
			if r.Type == params.TypeBool {
				value = "false"
			}
			doc, path := typeDoc(r, fmt.Sprintf("%q", value))
			got := params.New().Check("x.yaml", []byte(doc))
			if len(got) != 1 {
				t.Fatalf("got %d problems, want 1 from value-types:\n%s", len(got), join(got))
			}
			want := r.Message("string", value)
			if got[0].Rule != "value-types" || got[0].Path != path || got[0].Msg != want {
				t.Errorf("got  %s\nwant %s: %s [value-types]", got[0], path, want)
			}
			if r.Fails != "" && !strings.HasSuffix(want, ": "+r.FailsFor(value)) {
				t.Errorf("the message %q does not end with what the run fails with, %q", want, r.FailsFor(value))
			}
		})
	}
}

// TestTypeMessages: what a type problem says for values other than the
// quoted numbers TestTypeRules uses.
func TestTypeMessages(t *testing.T) {
	const parts = "participants:\n  - {cl_type: prysm, el_type: geth, count: 2, supernode: true"
	tests := []struct {
		name, yaml string
		want       string // the single problem; "" for none
	}{
		{"a bool where an integer is meant names no failure", parts + ", validator_count: true}\n",
			"participants[0].validator_count: must be an integer, got bool true [value-types]"},
		{"a float where an integer is meant", parts + ", el_min_cpu: 1.5}\n",
			"participants[0].el_min_cpu: must be an integer, got float 1.5 [value-types]"},
		{"null selects a nullable key's default", parts + ", validator_count: null}\n", ""},
		{"null is a truth test's false", parts + ", skip_start: null}\n", ""},
		{"null where the package compares", parts + ", el_min_cpu: null}\n",
			"participants[0].el_min_cpu: must be an integer, got null [value-types]"},
		{"a map where a list is meant", parts + "}\nadditional_services: {prometheus: true}\n",
			"additional_services: must be a list, got a map [value-types]"},
		{"a number string int() converts names no failure", parts + ", cl_min_cpu: \"1000\"}\n",
			"participants[0].cl_min_cpu: must be an integer, got string \"1000\" [value-types]"},
		{"an empty string passes the launchers' len() guard", parts + ", el_extra_params: \"\"}\n",
			"participants[0].el_extra_params: must be a list of strings, got string \"\" [value-types]"},
		{"a one-character balance is repeated, not refused", "participants: [{supernode: true}]\nnetwork_params: {validator_balance: \"8\"}\n",
			"network_params.validator_balance: must be a number, got string \"8\" [value-types]"},
		{"a float balance is a number", "participants: [{supernode: true}]\nnetwork_params: {validator_balance: 32.5, builder_balance: 0.5}\n", ""},
		{"list items", parts + ", vc_beacon_node_indices: [0, \"1\"]}\n",
			"participants[0].vc_beacon_node_indices[1]: every item must be an integer, got string \"1\" [value-types]"},
		{"a matrix entry", "participants_matrix: {el: [{el_type: geth}], cl: [{cl_type: prysm, supernode: \"yes\"}]}\n",
			"participants_matrix.cl[0].supernode: must be true or false, got string \"yes\" (ethereum-package tests it for truth, and any non-empty string is true) [value-types]"},
		{"bps range", parts + "}\nnetwork_params: {payload_due_bps: 12000}\n",
			"network_params.payload_due_bps: must be basis points of a slot, 0..10000, got 12000 [value-types]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := params.New().Check("x.yaml", []byte(tt.yaml))
			if tt.want == "" {
				for _, p := range got {
					t.Errorf("unexpected problem: %s", p)
				}
				return
			}
			if len(got) != 1 || !strings.HasSuffix(got[0].String(), tt.want) {
				t.Errorf("got\n%s\nwant one problem ending %q", join(got), tt.want)
			}
		})
	}
}

// TestExtraParamsAppends: a string extra_params fails at the first thing
// that touches it: input_parser.star's append of a flag, or else the
// launcher's loop. The corpus (cl-extra-params-string*.yaml,
// vc-extra-params-string-mev.yaml) proves both messages against the real
// package.
func TestExtraParamsAppends(t *testing.T) {
	const (
		appendFails = "ethereum-package fails: string has no .append field or method"
		loopFails   = "ethereum-package fails: string value is not iterable"
		vcLoopFails = "ethereum-package fails when it launches a separate VC: string value is not iterable"
	)
	tests := []struct {
		name, yaml string
		want       []string // per problem, in line order
	}{
		{"a lone lodestar runs single-node", "participants: [{cl_type: lodestar, cl_extra_params: \"--x\"}]\n", []string{appendFails}},
		{"two lodestars do not", "participants: [{cl_type: lodestar, count: 2, cl_extra_params: \"--x\"}]\n", []string{loopFails}},
		{"disable_peer_scoring appends for prysm", "participants: [{cl_type: prysm, cl_extra_params: \"--x\"}]\ndisable_peer_scoring: true\n", []string{appendFails}},
		{"disable_peer_scoring has no nimbus flag", "participants: [{cl_type: nimbus, cl_extra_params: \"--x\"}]\ndisable_peer_scoring: true\n", []string{loopFails}},
		{"a mev_type appends to every VC", "participants: [{cl_type: prysm, vc_extra_params: \"--x\"}]\nmev_type: mock\n", []string{appendFails}},
		{"lighthouse's VC only with gas_limit 0", "participants: [{cl_type: lighthouse, vc_extra_params: \"--x\"}]\nmev_type: flashbots\n", []string{appendFails}},
		{"Gloas sets gas_limit: no lighthouse VC flag", "participants: [{cl_type: lighthouse, vc_extra_params: \"--x\"}]\nnetwork_params: {gloas_fork_epoch: 0}\nmev_type: flashbots\n", []string{vcLoopFails}},
		{"buildoor builds on participant 1 by default", "participants:\n  - {cl_type: prysm, cl_extra_params: \"--x\"}\n  - {cl_type: prysm, cl_extra_params: \"--y\"}\nadditional_services: [buildoor]\n",
			[]string{appendFails, loopFails}},
		{"buildoor's instances name the participants", "participants:\n  - {cl_type: prysm, cl_extra_params: \"--x\"}\n  - {cl_type: prysm, cl_extra_params: \"--y\"}\nadditional_services: [buildoor]\nbuildoor_params: {instances: [{participant: 2}]}\n",
			[]string{loopFails, appendFails}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := params.New().Check("x.yaml", []byte(tt.yaml))
			var msgs []string
			for _, p := range got {
				if strings.Contains(p.Path, "extra_params") {
					msgs = append(msgs, p.Msg)
				}
			}
			if len(msgs) != len(tt.want) {
				t.Fatalf("got\n%s\nwant %d extra_params problems", join(got), len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.HasSuffix(msgs[i], w) {
					t.Errorf("problem %d: %s\nwant it to end %q", i, msgs[i], w)
				}
			}
		})
	}
}
