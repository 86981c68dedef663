package params_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/segdiff/segdiff/internal/repo"

	"github.com/segdiff/segdiff/internal/clientpatch"
	"github.com/segdiff/segdiff/internal/params"
)

// repoFile is a path relative to the repository root.
func repoFile(rel string) string {
	root, err := repo.Root()
	if err != nil {
		panic(err)
	}
	return filepath.Join(root, rel)
}

func TestNetworkParamsFilesPass(t *testing.T) {
	m, err := clientpatch.LoadFile(repoFile(clientpatch.DefaultPath))
	if err != nil {
		t.Fatalf("load client manifest (network-params files name its entries): %v", err)
	}
	files, err := filepath.Glob(repoFile("network-params/*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 5 {
		t.Fatalf("found %d network-params files, want at least 5 (segmented, whole, home-builder, datacenter-20, ci)", len(files))
	}
	c := params.New(params.WithManifest(m))
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			problems, err := c.CheckFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range problems {
				t.Error(p)
			}
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(data), "# ") {
				t.Errorf("%s: missing the comment header saying what the scenario is for", f)
			}
		})
	}
}

// base is a valid file; the cases below mutate one line of it.
const base = `participants:
  - cl_type: prysm
    cl_image: "@clients/prysm-segmented"
    el_type: geth
    count: 4
network_params:
  network: kurtosis
  seconds_per_slot: 12
  gloas_fork_epoch: 0
  builder_count: 0
additional_services:
  - prometheus
  - grafana
segdiff:
  mode: segmented
  prometheus:
    scrape_interval: 5s
  link_classes:
    default: home
    overrides:
      - participant: 3
        class: datacenter
`

func TestCheck(t *testing.T) {
	tests := []struct {
		name       string
		old, new   string
		old2, new2 string // optional second replacement
		want       string // substring of the single expected problem; "" for none
	}{
		{name: "valid", want: ""},
		{name: "unknown participant key", old: "el_type: geth", new: "el_tpye: geth",
			want: "x.yaml:4: participants[0].el_tpye: unknown key (did you mean el_type?)"},
		{name: "unknown top-level key", old: "additional_services:", new: "additional_service:",
			want: "x.yaml:11: additional_service: unknown key (did you mean additional_services?)"},
		{name: "old gloas name", old: "gloas_fork_epoch: 0", new: "eip7732_fork_epoch: 0",
			want: "x.yaml:9: network_params.eip7732_fork_epoch: unknown key"},
		{name: "devnet name", old: "network: kurtosis", new: "network: glamsterdam-devnet-3",
			want: "x.yaml:7: network_params.network: \"glamsterdam-devnet-3\" joins the public devnet"},
		{name: "builder without gloas at 0", old: "gloas_fork_epoch: 0\n  builder_count: 0", new: "gloas_fork_epoch: 1\n  builder_count: 2",
			want: "x.yaml:10: network_params.builder_count: builder_count is 2 but gloas_fork_epoch is 1. Builders are only supported when gloas_fork_epoch is 0 (GLOAS at genesis). [builders-need-gloas-at-genesis]"},
		{name: "builder with gloas unset", old: "gloas_fork_epoch: 0\n  builder_count: 0", new: "builder_count: 2",
			want: "x.yaml:9: network_params.builder_count: builder_count is 2 but gloas_fork_epoch is 18446744073709551615."},
		{name: "grafana before prometheus", old: "  - prometheus\n  - grafana", new: "  - grafana\n  - prometheus",
			want: "x.yaml:12: additional_services[0]: grafana must come after prometheus"},
		{name: "misspelled cl type", old: "cl_type: prysm", new: "cl_type: prsym",
			want: "x.yaml:2: participants[0].cl_type: unknown client type \"prsym\"; ethereum-package 0350d2e accepts lighthouse, teku, nimbus, prysm, lodestar, grandine, consensoor, caplin (did you mean prysm?)"},
		{name: "misspelled el type", old: "el_type: geth", new: "el_type: gteh",
			want: "x.yaml:4: participants[0].el_type: unknown client type \"gteh\""},
		{name: "seconds_per_slot trap", old: "seconds_per_slot: 12", new: "seconds_per_slot: 8\n  slot_duration_ms: 6000",
			want: "x.yaml:9: network_params.slot_duration_ms: seconds_per_slot (8) and slot_duration_ms (6000) are inconsistent. Expected slot_duration_ms to be 8000."},
		{name: "slot_duration_ms alone overrides a default seconds_per_slot", old: "seconds_per_slot: 12", new: "seconds_per_slot: 12\n  slot_duration_ms: 6000"},
		{name: "bad link class", old: "class: datacenter", new: "class: datacentre",
			want: "x.yaml:22: segdiff.link_classes.overrides[0].class: unknown link class \"datacentre\"; use one of home, datacenter, custom (did you mean datacenter?)"},
		{name: "override out of range", old: "participant: 3", new: "participant: 4",
			want: "x.yaml:21: segdiff.link_classes.overrides[0].participant: participant 4 out of range: 4 participants after count expansion (0-based)"},
		{name: "custom without profile", old: "default: home", new: "default: custom",
			want: "x.yaml:19: segdiff.link_classes: class custom is used but segdiff.link_classes.custom"},
		{name: "unknown segdiff key", old: "mode: segmented", new: "mode: segmented\n  moed: whole",
			want: "x.yaml:16: segdiff.moed: unknown key (did you mean mode?)"},
		{name: "bad mode", old: "mode: segmented", new: "mode: segmentd",
			want: "x.yaml:15: segdiff.mode: unknown mode \"segmentd\""},
		{name: "bad scrape interval", old: "scrape_interval: 5s", new: "scrape_interval: 5 seconds",
			want: "x.yaml:17: segdiff.prometheus.scrape_interval: \"5 seconds\" is not a Prometheus duration"},
		{name: "unknown client entry", old: "@clients/prysm-segmented", new: "@clients/prysm-segmentd",
			want: "x.yaml:3: participants[0].cl_image: @clients/prysm-segmentd: no entry \"prysm-segmentd\" in clients.yaml (entries: geth-gloas, prysm-gloas, prysm-plain, prysm-segmented) (did you mean prysm-segmented?)"},
		{name: "client entry for another client type", old: "cl_type: prysm", new: "cl_type: lighthouse",
			want: "x.yaml:3: participants[0].cl_image: @clients/prysm-segmented is built for cl_type prysm, but this participant has cl_type lighthouse"},
		{name: "image runs another mode", old: "@clients/prysm-segmented", new: "@clients/prysm-gloas",
			want: "x.yaml:3: participants[0].cl_image: @clients/prysm-gloas runs mode whole (clients.yaml), but segdiff.mode is segmented"},
		{name: "a mixed devnet runs whole-message images beside its mode", old: "    count: 4\n", new: "    count: 2\n  - {cl_type: prysm, cl_image: \"@clients/prysm-gloas\", el_type: geth, count: 2}\n",
			old2: "mode: segmented", new2: "mode: segmented\n  mixed: true"},
		{name: "a mixed devnet of one mode", old: "mode: segmented", new: "mode: segmented\n  mixed: true",
			want: "x.yaml:16: segdiff.mixed: a mixed devnet runs segmented clients beside whole-message ones, but its CL images run segmented (segdiff.mode is segmented)"},
		{name: "mixed is a bool", old: "mode: segmented", new: "mode: segmented\n  mixed: yes please",
			want: "x.yaml:16: segdiff.mixed: must be true or false, got \"yes please\""},
		{name: "el entry as cl image", old: "@clients/prysm-segmented", new: "@clients/geth-gloas",
			want: "x.yaml:3: participants[0].cl_image: @clients/geth-gloas is an image for the el layer in clients.yaml, not cl"},
		{name: "unknown additional service", old: "  - grafana", new: "  - grafana\n  - promethues",
			want: "x.yaml:14: additional_services[2]: unknown additional service \"promethues\""},
		{name: "fulu without custody", old: "count: 4", new: "count: 4\n    validator_count: 32",
			want: "x.yaml:1: participants: Fulu fork is enabled (epoch: 0) but no supernodes are configured, no nodes have 128 or more validators"},
		{name: "shaping conflict", old: "additional_services:", new: "disruptoor_params:\n  shaping: []\nadditional_services:",
			want: "x.yaml:12: disruptoor_params.shaping: conflicts with segdiff.link_classes"},
		{name: "partial prometheus_config", old: "count: 4", new: "count: 4\n    prometheus_config: {scrape_interval: 5s}",
			want: "x.yaml:6: participants[0].prometheus_config: give both scrape_interval and labels"},
		{name: "nimbus with short slots", old: "cl_type: prysm\n    cl_image: \"@clients/prysm-segmented\"", new: "cl_type: nimbus",
			old2: "seconds_per_slot: 12", new2: "seconds_per_slot: 6",
			want: "x.yaml:2: participants[0].cl_type: nimbus can't be run with slot times below 12 seconds with mainnet preset (seconds_per_slot 6) [nimbus-slot-time]"},
		{name: "epoch beyond uint64", old: "gloas_fork_epoch: 0", new: "gloas_fork_epoch: 18446744073709551616",
			want: "x.yaml:9: network_params.gloas_fork_epoch: must be an unsigned integer (at most 2^64-1)"},
		{name: "far future epoch is fine", old: "  builder_count: 0", new: "  builder_count: 0\n  heze_fork_epoch: 18446744073709551615"},
		{name: "buildoor instances without the service", old: "additional_services:", new: "buildoor_params:\n  instances: [{participant: 1}]\nadditional_services:",
			want: "x.yaml:12: buildoor_params.instances: buildoor_params.instances is set but 'buildoor' is not in additional_services."},
		{name: "buildoor instance out of range", old: "  - grafana", new: "  - grafana\n  - buildoor\nbuildoor_params:\n  instances: [{participant: 5}]",
			want: "x.yaml:16: buildoor_params.instances[0].participant: buildoor_params.instances participant must be a 1-based participant index between 1 and 4, got 5."},
		// roles (segdiff.role per participant) and link class loss
		{name: "withholders on a client with the flag", old: "count: 4", new: "count: 4\n    segdiff: {role: withholder}"},
		{name: "relay needs no flag", old: "cl_image: \"@clients/prysm-segmented\"", new: "cl_image: ethpandaops/prysm-beacon-chain:glamsterdam-devnet-7\n    segdiff: {role: relay}"},
		{name: "role the client has no flag for", old: "@clients/prysm-segmented\"", new: "@clients/prysm-plain\"\n    segdiff:\n      role: silent",
			want: "x.yaml:5: participants[0].segdiff.role: client prysm-plain (cl_image @clients/prysm-plain) has no flag for role silent in clients.yaml (its roles: none); clients with role flags: prysm-segmented (mute, silent, withholder) [roles]"},
		{name: "role on a stock image", old: "cl_image: \"@clients/prysm-segmented\"", new: "cl_image: ethpandaops/prysm-beacon-chain:glamsterdam-devnet-7\n    segdiff: {role: mute}",
			want: "x.yaml:4: participants[0].segdiff.role: role mute needs a client with a flag for it, but cl_image ethpandaops/prysm-beacon-chain:glamsterdam-devnet-7 is not an @clients/ entry of clients.yaml; clients with role flags: prysm-segmented (mute, silent, withholder) [roles]"},
		{name: "role on the default image", old: "cl_image: \"@clients/prysm-segmented\"", new: "segdiff: {role: withholder}",
			want: "x.yaml:3: participants[0].segdiff.role: role withholder needs a client with a flag for it, but cl_image is not set: ethereum-package's default prysm image has none"},
		{name: "unknown role", old: "count: 4", new: "count: 4\n    segdiff: {role: withholdr}",
			want: "x.yaml:6: participants[0].segdiff.role: unknown role \"withholdr\"; use one of relay, withholder, silent, mute, unacking-withholder, under-reporter, padding-under-reporter (did you mean withholder?) [roles]"},
		{name: "unknown participant segdiff key", old: "count: 4", new: "count: 4\n    segdiff: {rol: mute}",
			want: "x.yaml:6: participants[0].segdiff.rol: unknown key (did you mean role?); the segdiff package fails: Invalid parameter participants[0].segdiff.rol, allowed fields: [role]"},
		{name: "role on the builder's participant", old: "count: 4", new: "count: 4\n    segdiff: {role: withholder}", old2: "  - grafana", new2: "  - grafana\n  - buildoor",
			want: "x.yaml:6: participants[0].segdiff.role: participant 1 (1-based, after count expansion) runs the builder (buildoor) and must stay relay"},
		{name: "loss on every class", old: "default: home", new: "default: home\n    home: {loss_percent: 1}\n    datacenter: {loss_percent: 0.5}"},
		{name: "loss of 100 percent", old: "default: home", new: "default: home\n    home: {loss_percent: 100}",
			want: "x.yaml:20: segdiff.link_classes.home.loss_percent: must be a percentage, 0 <= loss_percent < 100, got 100 [segdiff]"},
		{name: "negative loss", old: "default: home", new: "default: custom\n    custom: {up_mbps: 20, down_mbps: 20, loss_percent: -1}",
			want: "x.yaml:20: segdiff.link_classes.custom.loss_percent: must be a percentage, 0 <= loss_percent < 100, got -1"},
		{name: "loss as a string", old: "default: home", new: "default: home\n    datacenter: {loss_percent: 1%}",
			want: "x.yaml:20: segdiff.link_classes.datacenter.loss_percent: must be a number, the percentage of packets dropped (e.g. 1 or 0.5), got string \"1%\""},
		{name: "rates on a fixed class", old: "default: home", new: "default: home\n    home: {up_mbps: 20}",
			want: "x.yaml:20: segdiff.link_classes.home.up_mbps: unknown key; the segdiff package fails: Invalid parameter segdiff.link_classes.home.up_mbps, allowed fields: [loss_percent] (the rates of class home are the study's; for other rates use class custom)"},
		{name: "yaml syntax", old: "  - grafana", new: "  - grafana\n bad: [",
			want: "x.yaml:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := base
			if tt.old != "" {
				if !strings.Contains(src, tt.old) {
					t.Fatalf("test bug: %q not in base", tt.old)
				}
				src = strings.Replace(src, tt.old, tt.new, 1)
			}
			if tt.old2 != "" {
				if !strings.Contains(src, tt.old2) {
					t.Fatalf("test bug: %q not in base", tt.old2)
				}
				src = strings.Replace(src, tt.old2, tt.new2, 1)
			}
			c := params.New(params.WithClientTypes("clients.yaml", map[string]params.ClientType{
				"prysm-segmented": {Layer: "cl", Type: "prysm", Mode: "segmented", Roles: []string{"mute", "silent", "withholder"}},
				"prysm-plain":     {Layer: "cl", Type: "prysm", Mode: "segmented"},
				"prysm-gloas":     {Layer: "cl", Type: "prysm", Mode: "whole"},
				"geth-gloas":      {Layer: "el", Type: "geth"},
			}))
			got := c.Check("x.yaml", []byte(src))
			if tt.want == "" {
				for _, p := range got {
					t.Errorf("unexpected problem: %s", p)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("got %d problems, want 1 containing %q:\n%s", len(got), tt.want, join(got))
			}
			if !strings.Contains(got[0].String(), tt.want) {
				t.Errorf("got  %s\nwant %s", got[0], tt.want)
			}
		})
	}
}

func TestCheckReportsAllProblemsSorted(t *testing.T) {
	src := strings.NewReplacer("cl_type: prysm", "cl_type: prsym", "network: kurtosis", "network: my-devnet",
		"class: datacenter", "class: dc").Replace(base)
	got := params.New(params.WithClients("clients.yaml", []string{"prysm-segmented"})).Check("x.yaml", []byte(src))
	var lines []int
	for _, p := range got {
		lines = append(lines, p.Line)
	}
	if want := []int{2, 7, 22}; len(lines) != len(want) || lines[0] != 2 || lines[1] != 7 || lines[2] != 22 {
		t.Fatalf("problem lines %v, want %v:\n%s", lines, want, join(got))
	}
}

func TestCheckWithoutManifestReportsReferences(t *testing.T) {
	got := params.New().Check("x.yaml", []byte(base))
	if len(got) != 1 || !strings.Contains(got[0].Msg, "no client manifest was loaded") {
		t.Fatalf("got %s, want one problem about the missing manifest", join(got))
	}
}

func TestYAMLToJSON(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		want    string
		wantErr string // a part of the error; "" for none
	}{
		{name: "uint64 max survives exactly", yaml: "network_params:\n  gloas_fork_epoch: 18446744073709551615\n",
			want: `{"network_params":{"gloas_fork_epoch":18446744073709551615}}`},
		{name: "negative and small ints", yaml: "a: -1\nb: 0\nc: 9007199254740993\n",
			want: `{"a":-1,"b":0,"c":9007199254740993}`},
		{name: "strings stay strings", yaml: "cl_image: \"@clients/prysm\"\nn: \"12\"\n",
			want: `{"cl_image":"@clients/prysm","n":"12"}`},
		{name: "lists and nulls", yaml: "l: [1, null, x]\n", want: `{"l":[1,null,"x"]}`},
		{name: "non-string keys", yaml: "1: a\ntrue: b\n", want: `{"1":"a","true":"b"}`},
		{name: "empty document", yaml: "", want: `{}`},
		{name: "top level list", yaml: "- a\n", wantErr: "top level must be a map"},
		{name: "syntax error", yaml: "a: [\n", wantErr: "parse network params"},
		{name: "NaN names its key", yaml: "network_params:\n  seconds_per_slot: .nan\n", wantErr: "network_params.seconds_per_slot is NaN, which JSON cannot carry"},
		{name: "infinity in a list", yaml: "l: [1, -.inf]\n", wantErr: "l[1] is -Inf"},
		{name: "keys that collide as strings", yaml: "participants:\n  1: a\n  \"1\": b\n", wantErr: `mapping key "1" already defined`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := params.YAMLToJSON([]byte(tt.yaml))
			if (err != nil) != (tt.wantErr != "") || err != nil && !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if string(got) != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
			var v any
			if err := json.Unmarshal(got, &v); err != nil {
				t.Errorf("output is not JSON: %v", err)
			}
		})
	}
}

func join(ps []params.Problem) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(p.String() + "\n")
	}
	return b.String()
}
