package params_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/segdiff/segdiff/internal/params"
	"github.com/segdiff/segdiff/internal/params/paramstest"
)

// TestBadParamsCorpus: every file of testdata/bad yields exactly one
// problem, from the rule its header names, carrying the message the real
// code fails with (the real-package mode of internal/starlarktest checks
// that the real package fails with it too). Before issue 15 the checker
// accepted the files of the mismatch classes (tempo/zkboost/trueblocks keys,
// global_log_level, cl_extra_params, disruptoor include_control, fork and
// BPO order, value types) without a problem.
func TestBadParamsCorpus(t *testing.T) {
	cases, err := paramstest.LoadBadCases(filepath.Join("testdata", "bad"))
	if err != nil {
		t.Fatal(err)
	}
	rules := []string{params.RuleKeys}
	for _, r := range params.Rules {
		rules = append(rules, r.Name)
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.Path), func(t *testing.T) {
			if !slices.Contains(rules, c.Rule) {
				t.Fatalf("header names rule %q, which does not exist (%v)", c.Rule, rules)
			}
			got := params.New().Check(c.Path, c.Data)
			if len(got) != 1 {
				t.Fatalf("got %d problems, want 1 from rule %s:\n%s", len(got), c.Rule, join(got))
			}
			if got[0].Rule != c.Rule || !strings.Contains(got[0].Path+" "+got[0].Msg, c.Want) {
				t.Errorf("got %s\nwant rule %s, message containing %q", got[0], c.Rule, c.Want)
			}
		})
	}
}

// TestRules: one table per rule of the cases the corpus does not cover,
// each naming the rule it expects ("" = no problem).
func TestRules(t *testing.T) {
	const parts = "participants:\n  - {cl_type: prysm, count: 2, supernode: true}\n"
	tests := []struct {
		rule, name, yaml string
		want             string // substring of the single problem; "" for none
	}{
		// keys
		{params.RuleKeys, "tempo_params' real keys pass", parts + "tempo_params: {min_cpu: 1, max_cpu: 2, min_mem: 3, max_mem: 4, image: x}\n", ""},
		{params.RuleKeys, "trueblocks scrape's real keys pass", parts + "trueblocks_params: {image: x, scrape: {apps_per_chunk: 1, snap_to_grid: 2, first_snap: 3, unripe_dist: 4}}\n", ""},
		{params.RuleKeys, "matrix entry keys", "participants_matrix: {el: [{el_type: geth}], cl: [{cl_type: prysm, supernode: true, el_type: geth}]}\n",
			"participants_matrix.cl[0].el_type: unknown key (did you mean cl_type?); ethereum-package fails: Invalid parameter el_type for cl."},
		{params.RuleKeys, "matrix count must be an int", "participants_matrix: {el: [{}], cl: [{supernode: true}], count: two}\n",
			"ethereum-package fails: participants_matrix count must be an integer"},
		// value-types
		{"value-types", "payload_due_bps over 10000", parts + "network_params: {payload_due_bps: 12000}\n", "must be basis points of a slot, 0..10000, got 12000"},
		{"value-types", "far-future epoch", parts + "network_params: {heze_fork_epoch: 18446744073709551615}\n", ""},
		{"value-types", "ints pass", parts + "network_params: {payload_due_bps: 7500, seconds_per_slot: 6, slot_duration_ms: 6000}\n", ""},
		// slot-duration
		{"slot-duration", "only slot_duration_ms set", parts + "network_params: {slot_duration_ms: 6000}\n", ""},
		{"slot-duration", "minimal preset defaults", parts + "network_params: {preset: minimal, seconds_per_slot: 6, slot_duration_ms: 6000}\n", ""},
		{"slot-duration", "sub-second", parts + "network_params: {slot_duration_ms: 500}\n", "slot_duration_ms is 500, it needs to be at least 1000"},
		{"slot-duration", "zero seconds", parts + "network_params: {seconds_per_slot: 0}\n", "seconds_per_slot is 0 needs to be > 0"},
		// fulu-before-bpo, fork-order
		{"fulu-before-bpo", "bpo epochs moved after fulu", parts + "network_params: {fulu_fork_epoch: 3, bpo_1_epoch: 3, bpo_2_epoch: 4}\n", ""},
		{"fulu-before-bpo", "an explicit bpo before fulu is named", parts + "network_params: {fulu_fork_epoch: 3, bpo_1_epoch: 3, bpo_2_epoch: 2}\n",
			"network_params.bpo_2_epoch: fulu_fork_epoch is not at genesis (3), but bpo_2_epoch (2) is scheduled before it"},
		{"fork-order", "gloas unset and heze set", parts + "network_params: {heze_fork_epoch: 5}\n", "heze_fork_epoch 5 is before gloas_fork_epoch FAR_FUTURE"},
		{"fork-order", "in order", parts + "network_params: {electra_fork_epoch: 0, gloas_fork_epoch: 1, heze_fork_epoch: 2}\n", ""},
		// fulu-custody
		{"fulu-custody", "128 validators by default", "participants: [{count: 2}]\n", ""},
		{"fulu-custody", "fulu far future", "participants: [{validator_count: 8}]\nnetwork_params: {fulu_fork_epoch: 18446744073709551615, bpo_1_epoch: 18446744073709551615, bpo_2_epoch: 18446744073709551615}\n", ""},
		{"fulu-custody", "matrix-only: no default participant to count", "participants_matrix: {el: [{}], cl: [{validator_count: 8}]}\n",
			"Fulu fork is enabled (epoch: 0) but no supernodes are configured"},
		{"fulu-custody", "a vc entry's validator_count counts", "participants_matrix: {el: [{}], cl: [{validator_count: 8}], vc: [{validator_count: 128}]}\n", ""},
		{"fulu-custody", "perfect peerdas with too few participants", parts + "network_params: {perfect_peerdas_enabled: true}\n",
			"but the number of participants (2) is less than 16"},
		// log-levels
		{"log-levels", "a mapped global level", parts + "global_log_level: debug\n", ""},
		{"log-levels", "per-participant levels cover an unmapped global", "participants: [{cl_type: prysm, supernode: true, cl_log_level: info, el_log_level: warn}]\nglobal_log_level: verbose\n", ""},
		{"log-levels", "custom maps for teku and besu only", "participants: [{cl_type: teku, el_type: besu, supernode: true}]\nglobal_log_level: custom\n", ""},
		{"log-levels", "custom does not map for prysm", parts + "global_log_level: custom\n", "no mapping for global log level 'custom' (cl prysm has debug, error, info, trace, warn)"},
		// value-types on extra_params lists
		{"value-types", "an extra_params list passes", "participants: [{supernode: true, el_extra_params: [--a, --b=1]}]\n", ""},
		{"value-types", "a non-string extra_params item", "participants: [{supernode: true, vc_extra_params: [--a, 1]}]\n",
			"participants[0].vc_extra_params[1]: every item must be a string, got int 1"},
		// disruptoor-shaping
		{"disruptoor-shaping", "a valid rule", parts + "additional_services: [disruptoor]\ndisruptoor_params: {shaping: [{participants: all, delay: 10ms, include_control: true}]}\n", ""},
		{"disruptoor-shaping", "not launched: not checked", parts + "disruptoor_params: {shaping: [{participants: all, delay: 10ms}]}\n", ""},
		{"disruptoor-shaping", "no effect", parts + "additional_services: [disruptoor]\ndisruptoor_params: {shaping: [{participants: all, include_control: true}]}\n",
			"must define at least one of delay, loss, or bandwidth"},
		{"disruptoor-shaping", "jitter without delay", parts + "additional_services: [disruptoor]\ndisruptoor_params: {shaping: [{participants: all, loss: 1%, jitter: 1ms, include_control: true}]}\n",
			"jitter requires delay to be set"},
		{"disruptoor-shaping", "scope without include_control", parts + "additional_services: [disruptoor]\ndisruptoor_params: {shaping: [{participants: all, delay: 1ms, scope: [cl_p2p]}]}\n",
			"scope must include include_control"},
		{"disruptoor-shaping", "config with shaping", parts + "additional_services: [disruptoor]\ndisruptoor_params: {config: {a: 1}, shaping: [{participants: all, delay: 1ms, include_control: true}]}\n",
			"disruptoor_params.config cannot be used together with"},
		{"disruptoor-shaping", "bad component", parts + "additional_services: [disruptoor]\ndisruptoor_params: {shaping: [{participants: all, delay: 1ms, include_control: true, components: [bn]}]}\n",
			"contains unsupported component 'bn'"},
		// buildoor
		{"buildoor", "mev_type with buildoor", parts + "additional_services: [buildoor]\nmev_type: mock\n", "additional_services buildoor cannot be combined with a global mev_type (mock)"},
		{"buildoor", "duplicate participant", parts + "additional_services: [buildoor]\nbuildoor_params: {instances: [{participant: 1}, {participant: 1, count: 2}]}\n",
			"has duplicate entries for participant 1"},
		{"buildoor", "bad count", parts + "additional_services: [buildoor]\nbuildoor_params: {instances: [{participant: 2, count: 0}]}\n",
			"count for participant 2 must be an integer >= 1, got 0."},
		// client-types
		{"client-types", "el_type null", "participants: [{el_type: null, supernode: true}]\n", ""},
		// roles
		{"roles", "relay anywhere, without a manifest", "participants: [{cl_type: teku, supernode: true, segdiff: {role: relay}}]\n", ""},
		{"roles", "an adversarial role needs the manifest", "participants: [{cl_type: prysm, cl_image: x/y:z, supernode: true, segdiff: {role: silent}}]\n",
			"participants[0].segdiff.role: role silent is played by flags a client-patches entry maps it to, but no client manifest was loaded"},
		{"roles", "a matrix cl entry may carry it", "participants_matrix: {el: [{}], cl: [{supernode: true, segdiff: {role: relay}}]}\n", ""},
		{"roles", "the section must be a map", "participants: [{supernode: true, segdiff: withholder}]\n", "participants[0].segdiff: must be a map, got \"withholder\""},
		{params.RuleKeys, "not on an el matrix entry", "participants_matrix: {el: [{segdiff: {role: relay}}], cl: [{supernode: true}]}\n",
			"participants_matrix.el[0].segdiff: unknown key; ethereum-package fails: Invalid parameter segdiff for el."},
	}
	for _, tt := range tests {
		t.Run(tt.rule+"/"+tt.name, func(t *testing.T) {
			got := params.New().Check("x.yaml", []byte(tt.yaml))
			if tt.want == "" {
				for _, p := range got {
					t.Errorf("unexpected problem: %s", p)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("got %d problems, want 1 from %s containing %q:\n%s", len(got), tt.rule, tt.want, join(got))
			}
			if got[0].Rule != tt.rule || !strings.Contains(got[0].String(), tt.want) {
				t.Errorf("got %s\nwant rule %s, message containing %q", got[0], tt.rule, tt.want)
			}
		})
	}
}

// TestEveryRuleHasACase: each rule of Rules is exercised by the corpus or
// TestCheck/TestRules (a rule nobody triggers cannot be known to work).
func TestEveryRuleHasACase(t *testing.T) {
	cases, err := paramstest.LoadBadCases(filepath.Join("testdata", "bad"))
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]bool{
		// TestCheck cases
		"network-name": true, "client-refs": true, "client-modes": true, "segdiff": true, "roles": true,
	}
	for _, c := range cases {
		covered[c.Rule] = true
	}
	for _, r := range params.Rules {
		if !covered[r.Name] {
			t.Errorf("rule %s has no case in testdata/bad (or TestCheck)", r.Name)
		}
	}
}
