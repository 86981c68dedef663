package main

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/segdiff/segdiff/assertions"
	"github.com/segdiff/segdiff/diffusion/role"
	"github.com/segdiff/segdiff/internal/clientpatch"
	"github.com/segdiff/segdiff/internal/devnet"
	"github.com/segdiff/segdiff/internal/params"
	"github.com/segdiff/segdiff/internal/repo"
	"github.com/segdiff/segdiff/internal/stress"
	"github.com/segdiff/segdiff/internal/sweep"
	"github.com/segdiff/segdiff/metrics"
)

// A role is one registration: the CLI offers a flag for its share and the
// run spec carries it, a sweep grid's stress axis names it, the params
// checker takes it in a participant's segdiff.role (and asks for a client
// flag for it), and the honest filter leaves its nodes out. A fault
// condition is one registration plus its effect in the embedded devnet: the
// CLI and the grids name it at once, and until it has an effect every run
// spec holding it is refused, naming it, before anything runs.
func TestANewRoleAndStressReachEveryConsumer(t *testing.T) {
	lazy := role.Role{Name: "lazy", Doc: "forwards, never announces", Forward: true, Answer: true}
	if err := role.Register(lazy); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { role.Unregister(lazy.Name) })
	jitter := stress.Condition{Name: "jitter", Doc: "extra latency jitter (0..0.9)", Kind: stress.Spread}
	if err := stress.Register(jitter); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stress.Unregister(jitter.Name) })

	t.Run("sim flags and the run spec", func(t *testing.T) {
		var help bytes.Buffer
		if _, err := parseSimFlags([]string{"--help"}, &help); err == nil {
			t.Fatal("--help did not stop")
		}
		for _, want := range []string{"-lazy", "share of non-builder nodes that play lazy", "-jitter", "extra latency jitter"} {
			if !strings.Contains(help.String(), want) {
				t.Errorf("sim --help lacks %q", want)
			}
		}
		f, err := parseSimFlags([]string{"--lazy", "10%"}, &help)
		if err != nil {
			t.Fatal(err)
		}
		cfgs, err := f.configs()
		if err != nil {
			t.Fatal(err)
		}
		if got := cfgs[0].Stress.String(); got != "lazy=0.1" {
			t.Errorf("run spec stress %q", got)
		}
		if f, err = parseSimFlags([]string{"--lazy", "10%", "--jitter", "0.2"}, &help); err != nil {
			t.Fatal(err)
		}
		if _, err := f.configs(); err == nil || !strings.Contains(err.Error(), "jitter: package stress registers this condition, but the embedded devnet does not apply it") {
			t.Errorf("a condition the simulation does not apply: %v", err)
		}
		if _, err := parseSimFlags([]string{"--lazy", "70%"}, &help); err == nil || !strings.Contains(err.Error(), "want a share 0..0.5") {
			t.Errorf("a share above half: %v", err)
		}
	})

	t.Run("sweep grid", func(t *testing.T) {
		g, err := sweep.Decode("g.yaml", []byte("fixed: {nodes: 16, degree: 14}\naxes:\n  stress:\n    l: {lazy: 0.25}\n"))
		if err != nil {
			t.Fatal(err)
		}
		p, err := sweep.NewPlan(g, sweep.Memory{})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Cells[0].Config.Stress.String(); got != "lazy=0.25" {
			t.Errorf("cell stress %q", got)
		}
		g, err = sweep.Decode("g.yaml", []byte("fixed: {nodes: 16, degree: 14}\naxes:\n  stress:\n    j: {jitter: 0.1}\n"))
		if err != nil {
			t.Fatalf("a registered condition is a grid key: %v", err)
		}
		if _, err := sweep.NewPlan(g, sweep.Memory{}); err == nil || !strings.Contains(err.Error(), "embedded devnet does not apply it") {
			t.Errorf("a grid cell under a condition the simulation does not apply: %v", err)
		}
	})

	t.Run("params checker", func(t *testing.T) {
		m, err := clientpatch.LoadFile(repo.Path(t, clientpatch.DefaultPath))
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(repo.Path(t, "network-params", "stress-withholders.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		c := params.New(params.WithManifest(m))
		for _, tc := range []struct{ as, want string }{
			{"lazy", "has no flag for role lazy"},
			{"lazi", `unknown role "lazi"`},
		} {
			file := strings.Replace(string(data), "role: withholder", "role: "+tc.as, 1)
			var msgs []string
			for _, p := range c.Check("stress.yaml", []byte(file)) {
				msgs = append(msgs, p.String())
			}
			if !strings.Contains(strings.Join(msgs, "\n"), tc.want) {
				t.Errorf("role %s: problems %q, want one saying %q", tc.as, msgs, tc.want)
			}
		}
	})

	t.Run("honest filter", func(t *testing.T) {
		// The suite's record of a network (what every verdict reads) built
		// from nodes as a devnet lists them: the lazy node is no receiver.
		slot := &metrics.Slot{Number: 2}
		snaps := map[string]*metrics.Snapshot{}
		for _, id := range []string{"node-000", "node-001", "node-002"} {
			snaps[id] = &metrics.Snapshot{Source: id, Slots: map[uint64]*metrics.Slot{2: slot}}
		}
		nodes := []devnet.Node{
			{ID: "node-000", Roles: []devnet.Role{devnet.RoleBuilder}},
			{ID: "node-001", Roles: []devnet.Role{devnet.RoleNode}},
			{ID: "node-002", Roles: []devnet.Role{devnet.RoleNode, "lazy"}},
		}
		net, err := assertions.FromSnapshots(nodes, snaps)
		if err != nil {
			t.Fatal(err)
		}
		var receivers []string
		for _, n := range net.Receivers() {
			receivers = append(receivers, n.ID)
		}
		if !slices.Equal(receivers, []string{"node-001"}) {
			t.Errorf("receivers %q, want node-001 only: the lazy node-002 would count as an honest receiver", receivers)
		}
		nodes[2].Roles[1] = "lazi"
		if _, err := assertions.FromSnapshots(nodes, snaps); err == nil || !strings.Contains(err.Error(), `holds role "lazi"`) {
			t.Errorf("a node holding an unregistered role: %v", err)
		}
	})
}
