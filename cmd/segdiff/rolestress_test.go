package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/segdiff/segdiff/diffusion/role"
	"github.com/segdiff/segdiff/internal/clientpatch"
	"github.com/segdiff/segdiff/internal/devnet"
	"github.com/segdiff/segdiff/internal/params"
	"github.com/segdiff/segdiff/internal/repo"
	"github.com/segdiff/segdiff/internal/stress"
	"github.com/segdiff/segdiff/internal/sweep"
)

// A role and a stress condition are each one registration: the CLI offers a
// flag for each and the run spec carries them, a sweep grid's stress axis
// names them, the params checker takes the role in a participant's
// segdiff.role (and asks for a client flag for it), and the honest filter
// leaves the role's nodes out.
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
		f, err := parseSimFlags([]string{"--lazy", "10%", "--jitter", "0.2"}, &help)
		if err != nil {
			t.Fatal(err)
		}
		cfgs, err := f.configs()
		if err != nil {
			t.Fatal(err)
		}
		if got := cfgs[0].Stress.String(); got != "jitter=0.2,lazy=0.1" {
			t.Errorf("run spec stress %q", got)
		}
		if _, err := parseSimFlags([]string{"--lazy", "70%"}, &help); err == nil || !strings.Contains(err.Error(), "want a share 0..0.5") {
			t.Errorf("a share above half: %v", err)
		}
	})

	t.Run("sweep grid", func(t *testing.T) {
		g, err := sweep.Decode("g.yaml", []byte("fixed: {nodes: 16, degree: 14}\naxes:\n  stress:\n    l: {lazy: 0.25, jitter: 0.1}\n"))
		if err != nil {
			t.Fatal(err)
		}
		p, err := sweep.NewPlan(g, sweep.Memory{})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Cells[0].Config.Stress.String(); got != "jitter=0.1,lazy=0.25" {
			t.Errorf("cell stress %q", got)
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
		if !devnet.Role("lazy").Adversarial() || !devnet.Role("lazy").Known() {
			t.Error("a node playing the new role would count as an honest receiver")
		}
		if devnet.Role("lazi").Known() {
			t.Error("an unregistered role is known")
		}
	})
}
