package starlarktest_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/segdiff/segdiff/internal/clientpatch"
	"github.com/segdiff/segdiff/internal/starlarktest"
)

// resolved returns argsYAML with its @clients/ images and role flags
// resolved from client-patches/clients.yaml, as `segdiff devnet up` does.
func resolved(t *testing.T, argsYAML string) string {
	t.Helper()
	var raw map[string]any
	if err := yaml.Unmarshal([]byte(argsYAML), &raw); err != nil {
		t.Fatal(err)
	}
	m, err := clientpatch.LoadFile(filepath.Join(packageDir, "..", clientpatch.DefaultPath))
	if err != nil {
		t.Fatal(err)
	}
	if err := clientpatch.ResolveParticipants(raw, m); err != nil {
		t.Fatal(err)
	}
	out, err := yaml.Marshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// commandWords is every word a service's container is started with: its
// entrypoint and cmd, an `sh -c` script split into words (ethereum-package's
// prysm launcher builds one; the stand-in records the extra parameters).
func commandWords(svc *starlarktest.Service) []string {
	var out []string
	for _, part := range append(slices.Clone(svc.Entrypoint), svc.Cmd...) {
		out = append(out, strings.Fields(part)...)
	}
	return out
}

const rolesArgs = `
participants:
  - {cl_type: prysm, cl_image: "@clients/prysm-segmented", el_type: geth, el_image: "@clients/geth-gloas", count: 2}
  - cl_type: prysm
    cl_image: "@clients/prysm-segmented"
    el_type: geth
    el_image: "@clients/geth-gloas"
    count: 2
    segdiff: {role: withholder}
  - {cl_type: prysm, cl_image: "@clients/prysm-segmented", el_type: geth, el_image: "@clients/geth-gloas", segdiff: {role: mute}}
participants_matrix:
  el: [{el_type: geth, el_image: "@clients/geth-gloas"}]
  cl: [{cl_type: prysm, cl_image: "@clients/prysm-segmented", segdiff: {role: silent}}]
network_params:
  network: kurtosis
  seconds_per_slot: 12
  gloas_fork_epoch: 0
segdiff:
  mode: segmented
`

// TestParticipantRolesReachTheirBeaconNodes: each participant's segdiff.role
// becomes the client flag clients.yaml maps it to, on that participant's CL
// service only (count copies included, a participants_matrix cl entry's
// combinations too); relay participants get no role flag; the segdiff
// sections never reach ethereum-package; the run output names each node's
// role.
func TestParticipantRolesReachTheirBeaconNodes(t *testing.T) {
	args := resolved(t, rolesArgs)
	want := []string{"relay", "relay", "withholder", "withholder", "mute", "silent"}
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			p, out := mustRunOn(t, b, args, "docker")
			var entries []any
			entries = append(entries, p.EthereumPackageArgs["participants"].([]any)...)
			entries = append(entries, p.EthereumPackageArgs["participants_matrix"].(map[string]any)["cl"].([]any)...)
			for i, e := range entries {
				if _, leaked := e.(map[string]any)["segdiff"]; leaked {
					t.Errorf("entry %d reached ethereum-package with its segdiff section (it rejects unknown participant keys)", i)
				}
			}
			if len(out.SegdiffNodes) != len(want) {
				t.Fatalf("segdiff_nodes = %d, want %d", len(out.SegdiffNodes), len(want))
			}
			for i, n := range out.SegdiffNodes {
				if n.DiffusionRole != want[i] {
					t.Errorf("node %d (%s) diffusion_role %q, want %q", i, n.ID, n.DiffusionRole, want[i])
				}
				svc := p.Services[n.CLService]
				if svc == nil {
					t.Fatalf("node %s: no CL service %s", n.ID, n.CLService)
				}
				words := commandWords(svc)
				var roleFlags []string
				for _, w := range words {
					if strings.HasPrefix(w, "--segdiff-dev-role") {
						roleFlags = append(roleFlags, w)
					}
				}
				wantFlags := []string(nil)
				if want[i] != "relay" {
					wantFlags = []string{"--segdiff-dev-role=" + want[i]}
				}
				if !slices.Equal(roleFlags, wantFlags) {
					t.Errorf("node %d (%s, role %s): role flags %q, want %q", i, n.CLService, want[i], roleFlags, wantFlags)
				}
				if !slices.Contains(words, "--enable-segmented-payload-gossip") {
					t.Errorf("node %d (%s): the image's own flag is missing: %q", i, n.CLService, words)
				}
			}
		})
	}
}

func TestParticipantRoleBadInput(t *testing.T) {
	for _, tt := range []struct{ name, args, want string }{
		{"unknown role", "participants: [{segdiff: {role: byzantine}}]\n",
			`participants[0].segdiff.role: unknown role "byzantine"; use one of relay, withholder, silent, mute, unacking-withholder, under-reporter, padding-under-reporter`},
		{"unknown key", "participants: [{}, {segdiff: {rol: mute}}]\n",
			"Invalid parameter participants[1].segdiff.rol, allowed fields"},
		{"not a map", "participants: [{segdiff: mute}]\n", "participants[0].segdiff must be a map with keys"},
		{"matrix cl entry", "participants_matrix: {el: [{}], cl: [{segdiff: {role: mutee}}]}\n",
			`participants_matrix.cl[0].segdiff.role: unknown role "mutee"`},
		{"matrix el entry", "participants_matrix: {el: [{segdiff: {role: mute}}], cl: [{}]}\n",
			"participants_matrix.el[0].segdiff: a role belongs on the beacon node's entry"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := run(t, tt.args, "docker")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// disruptoorConfig returns the shaping rules of the config disruptoor is
// started with (disruptoor_launcher.star renders them to /config/config.json),
// by rule name.
func disruptoorConfig(t *testing.T, p *starlarktest.Plan) map[string]map[string]any {
	t.Helper()
	d := p.Services["disruptoor"]
	if d == nil {
		t.Fatalf("no disruptoor service; services: %v", p.ServiceNames())
	}
	if !slices.Contains(commandWords(d), "--config=/config/config.json") {
		t.Errorf("disruptoor is not started with its config: %q", commandWords(d))
	}
	art := p.Artifacts[d.Files["/config"]]
	if art == nil {
		t.Fatalf("disruptoor mounts no artifact at /config: %v", d.Files)
	}
	var state struct {
		Shaping []map[string]any `json:"shaping"`
	}
	if err := json.Unmarshal([]byte(art.Files["config.json"]), &state); err != nil {
		t.Fatalf("disruptoor config.json: %v\n%s", err, art.Files["config.json"])
	}
	out := map[string]map[string]any{}
	for _, r := range state.Shaping {
		out[fmt.Sprint(r["name"])] = r
	}
	return out
}

// TestLinkClassLoss: a class's loss_percent becomes netem loss ("<n>%") in
// that class's disruptoor rule only, in the config disruptoor is started
// with, aimed at that class's participants' beacon nodes; a class without a
// loss gets none.
func TestLinkClassLoss(t *testing.T) {
	args := `
participants:
  - {cl_type: prysm, el_type: geth, count: 6}
segdiff:
  link_classes:
    default: home
    home: {loss_percent: 1}
    datacenter: {loss_percent: 0}
    overrides:
      - {participant: 1, class: datacenter}
      - {participant: 5, class: custom}
    custom: {up_mbps: 200, down_mbps: 400, latency_ms: 20, loss_percent: 0.5}
`
	type want struct {
		nodes []any
		loss  any // nil: no loss
	}
	wants := map[string]want{
		"segdiff-home":       {[]any{1.0, 3.0, 4.0, 5.0}, "1%"},
		"segdiff-datacenter": {[]any{2.0}, nil},
		"segdiff-custom":     {[]any{6.0}, "0.5%"},
	}
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			p, out := mustRunOn(t, b, args, "docker")
			rules := disruptoorConfig(t, p)
			if len(rules) != len(wants) {
				t.Errorf("disruptoor rules %v, want %d", rules, len(wants))
			}
			for name, w := range wants {
				r := rules[name]
				target, _ := r["target"].(map[string]any)
				if r == nil || !slices.Equal(target["node-index"].([]any), w.nodes) || !slices.Equal(target["client-type"].([]any), []any{"beacon"}) {
					t.Errorf("rule %s: %v, want the beacon nodes of participants %v", name, r, w.nodes)
					continue
				}
				if r["loss"] != w.loss {
					t.Errorf("rule %s loss %v, want %v", name, r["loss"], w.loss)
				}
			}
			// The run output reports the rules it asked for, loss included.
			for _, r := range out.Shaping {
				if w := wants[fmt.Sprint(r["name"])]; r["loss"] != w.loss {
					t.Errorf("output shaping %v: loss %v, want %v", r["name"], r["loss"], w.loss)
				}
			}
		})
	}
}

func TestLinkClassLossBadInput(t *testing.T) {
	const parts = "participants: [{count: 2}]\n"
	for _, tt := range []struct{ name, args, want string }{
		{"100 percent", "segdiff: {link_classes: {home: {loss_percent: 100}}}\n",
			"segdiff.link_classes.home.loss_percent must be a percentage, 0 <= loss_percent < 100, got 100"},
		{"negative", "segdiff: {link_classes: {default: custom, custom: {up_mbps: 5, down_mbps: 5, loss_percent: -0.5}}}\n",
			"segdiff.link_classes.custom.loss_percent must be a percentage, 0 <= loss_percent < 100, got -0.5"},
		{"a string", "segdiff: {link_classes: {datacenter: {loss_percent: 1%}}}\n",
			`segdiff.link_classes.datacenter.loss_percent must be a number, the percentage of packets dropped (e.g. 1 or 0.5), got string "1%"`},
		{"rates on a fixed class", "segdiff: {link_classes: {home: {up_mbps: 20}}}\n",
			"Invalid parameter segdiff.link_classes.home.up_mbps, allowed fields"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := run(t, parts+tt.args, "docker")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}
