package sweep

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/segdiff/segdiff/internal/devnet/embedded"
)

func TestNewPlan(t *testing.T) {
	p := mustPlan(t, smokeGrid)
	if len(p.Cells) != 8 {
		t.Fatalf("%d cells, want 2 modes × 2 networks × 2 seeds", len(p.Cells))
	}
	first, last := p.Cells[0], p.Cells[7]
	if first.String() != "mode=whole network=home seed=7" || last.String() != "mode=segmented network=dc20 seed=8" {
		t.Errorf("order: first %s, last %s", first, last)
	}
	var set []string
	for _, a := range last.Set {
		set = append(set, a.Key+"="+a.Value)
	}
	if got := strings.Join(set, " "); got != "nodes=16 degree=14 payloads=2 mode=segmented datacenter-share=0.2 seed=8" {
		t.Errorf("set = %s", got)
	}
	if last.Config.DatacenterShare != 0.2 || last.Config.Seed != 8 || last.Config.Nodes != 16 {
		t.Errorf("config = %+v", last.Config)
	}
	if last.Configuration() != "mode=segmented network=dc20" {
		t.Errorf("configuration = %s", last.Configuration())
	}
	seen := map[string]bool{}
	for _, c := range p.Cells {
		if seen[c.Hash] || len(c.Hash) != 16 {
			t.Errorf("hash %q repeated or malformed", c.Hash)
		}
		seen[c.Hash] = true
	}
	// The hash is of the configuration: the same cell planned again, or
	// reached by other flags, has the same folder.
	if again := mustPlan(t, smokeGrid); again.Cells[5].Hash != p.Cells[5].Hash {
		t.Error("hash not stable")
	}
	if Hash(p.Cells[0].Config) != p.Cells[0].Hash {
		t.Error("Hash(config) differs from the planned hash")
	}
}

// A grid the sim would reject, or too large for the budget, is refused
// before anything runs, at the line of the value.
func TestNewPlanRejects(t *testing.T) {
	tests := []struct {
		name, yaml string
		budget     int64
		want       string
	}{
		{"value of the wrong form", "fixed:\n  nodes: 16\n  degree: 14\n  payloads: x\naxes: {seed: [1]}\n", 0,
			"g.yaml:4: payloads: not an integer"},
		{"stress value of the wrong form", "fixed: {nodes: 16, degree: 14}\naxes:\n  stress:\n    w: {withholder: 60%}\n", 0,
			"g.yaml:4: withholder: withholder=0.6: want a share 0..0.5"},
		{"value the sim rejects", "fixed:\n  nodes: 16\n  degree: 14\naxes:\n  network:\n    a: {}\n    b: {datacenter-share: 1.5}\n", 0,
			"g.yaml:7: datacenter-share: 1.5, want 0..1"},
		{"preset value that does not fit", "preset: ci\nfixed:\n  nodes: 16\naxes: {seed: [1]}\n", 0,
			"g.yaml:1: degree: 20, but 16 nodes allow at most 15 connections per node (the preset ci's value"},
		{"unknown mode", "fixed: {nodes: 16, degree: 14}\naxes:\n  mode: [whole, flood]\n", 0,
			"g.yaml:3: mode: unknown diffusion mode \"flood\""},
		{"one cell above the budget", "fixed:\n  degree: 14\naxes:\n  nodes: [16,\n    5000]\n", 1 << 30,
			"g.yaml:5: nodes: configuration nodes=5000 needs an estimated"},
		{"two mixes alike", "fixed: {nodes: 16, degree: 14}\naxes:\n  network:\n    a: {}\n    b: {datacenter-share: 0}\n", 0,
			"resolve to the same configuration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := Decode("g.yaml", []byte(tt.yaml))
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			_, err = NewPlan(g, Memory{Budget: tt.budget})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// Under a GOMEMLIMIT a cell is planned at the limit plus a tenth, so a
// cell too large for the budget uncapped fits when its runtime is held
// below it; a limit above the estimate changes nothing.
func TestNewPlanCellLimit(t *testing.T) {
	const grid = "fixed:\n  degree: 14\naxes:\n  nodes: [16, 5000]\n"
	g, err := Decode("g.yaml", []byte(grid))
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	free, err := NewPlan(g, Memory{})
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	small, big := free.Cells[0].Memory, free.Cells[1].Memory
	limit := int64(1 << 30)
	if big <= limit+limit/10 || small >= limit {
		t.Fatalf("estimates %d and %d do not straddle the 1 GiB limit this test needs", small, big)
	}
	if _, err := NewPlan(g, Memory{Budget: 2 << 30}); err == nil {
		t.Fatal("5000 nodes fit a 2 GiB budget without a cell limit")
	}
	p, err := NewPlan(g, Memory{Budget: 2 << 30, CellLimit: limit})
	if err != nil {
		t.Fatalf("plan with a cell limit: %v", err)
	}
	if got := p.Cells[1].Memory; got != limit+limit/10 {
		t.Errorf("capped estimate %d, want %d", got, limit+limit/10)
	}
	if !strings.Contains(p.Cells[1].MemoryHow, "GOMEMLIMIT 1.0 GiB") {
		t.Errorf("how = %q, want it to name the limit", p.Cells[1].MemoryHow)
	}
	if got := p.Cells[0].Memory; got != small {
		t.Errorf("a cell below the limit was re-estimated: %d, want %d", got, small)
	}
}

// TestHashNetModel: the packet model spelled out is the unset key (one
// cell, and the cells run before the key existed), the flows model another.
func TestHashNetModel(t *testing.T) {
	c := embedded.DefaultConfig()
	// A spec from before the key has no net_model; the unset key must
	// encode (and so hash) the same.
	if b, err := json.Marshal(c); err != nil || strings.Contains(string(b), "net_model") {
		t.Errorf("the unset net_model encodes as %s (err %v), want it left out", b, err)
	}
	unset := Hash(c)
	c.NetModel = "packets"
	if Hash(c) != unset {
		t.Error("net_model packets hashes apart from the unset key")
	}
	c.NetModel = "flows"
	if Hash(c) == unset {
		t.Error("net_model flows hashes as the packet model")
	}
}
