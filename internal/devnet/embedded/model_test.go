package embedded_test

import (
	mathrand "math/rand"
	"strings"
	"testing"
	"time"

	"github.com/segdiff/segdiff/internal/stress"

	"github.com/segdiff/segdiff/diffusion/mode"
	"github.com/segdiff/segdiff/internal/devnet"
	"github.com/segdiff/segdiff/internal/devnet/embedded"
)

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		mod     func(*embedded.Config)
		wantErr string
	}{
		{name: "default", mod: func(*embedded.Config) {}},
		{name: "study preset", mod: func(c *embedded.Config) { *c, _ = embedded.Preset(embedded.PresetStudy500) }},
		{name: "custom class", mod: func(c *embedded.Config) { c.NodeClass = devnet.LinkCustom; c.CustomUpMbps = 20 }},
		{name: "builder elsewhere", mod: func(c *embedded.Config) { c.Builder = 31 }},
		{name: "degree not above Dhi", mod: func(c *embedded.Config) { c.Degree = 12 }, wantErr: "degree: 12 must exceed the mesh's Dhi=12"},
		{name: "degree above the node count", mod: func(c *embedded.Config) { c.Nodes = 8; c.Degree = 20 }, wantErr: "degree: 20, but 8 nodes allow at most 7"},
		{name: "odd nodes × degree", mod: func(c *embedded.Config) { c.Nodes = 33; c.Degree = 19 }, wantErr: "33 nodes × degree 19 is odd"},
		{name: "zero nodes", mod: func(c *embedded.Config) { c.Nodes = 0 }, wantErr: "nodes: 0, want 3.."},
		{name: "too many nodes", mod: func(c *embedded.Config) { c.Nodes = 100000 }, wantErr: "nodes: 100000"},
		{name: "zero payloads", mod: func(c *embedded.Config) { c.Payloads = 0 }, wantErr: "payloads: 0"},
		{name: "negative payloads", mod: func(c *embedded.Config) { c.Payloads = -2 }, wantErr: "payloads: -2"},
		{name: "zero payload size", mod: func(c *embedded.Config) { c.PayloadSize = 0 }, wantErr: "payload_size: 0"},
		{name: "payload above MAX_PAYLOAD_SIZE", mod: func(c *embedded.Config) { c.PayloadSize = 11 << 20 }, wantErr: "payload_size: 11534336"},
		{name: "segment too small", mod: func(c *embedded.Config) { c.SegmentSize = 0 }, wantErr: "segment_size: 0"},
		{name: "builder outside the network", mod: func(c *embedded.Config) { c.Builder = 32 }, wantErr: "builder: node 32, want 0..31"},
		{name: "unknown mode", mod: func(c *embedded.Config) { c.Mode = "flood" }, wantErr: `unknown diffusion mode "flood"`},
		{name: "unknown class", mod: func(c *embedded.Config) { c.BuilderClass = "fibre" }, wantErr: `builder_class: unknown link class "fibre"`},
		{name: "reveal after slot", mod: func(c *embedded.Config) { c.RevealOffset = c.SlotDuration }, wantErr: "reveal_offset"},
		{name: "zero window", mod: func(c *embedded.Config) { c.Window = 0 }, wantErr: "window: 0s"},
		{name: "zero uniform latency", mod: func(c *embedded.Config) { c.Latency = "uniform"; c.UniformLatency = 0 }, wantErr: "uniform_latency"},
		{name: "unknown network model", mod: func(c *embedded.Config) { c.NetModel = "fluid" }, wantErr: `net_model: "fluid", want one of packets, flows, flows-cc`},
		{name: "empty network model is packets", mod: func(c *embedded.Config) { c.NetModel = "" }},
		{name: "flows model", mod: func(c *embedded.Config) { c.NetModel = "flows" }},
		{name: "omit every part", mod: func(c *embedded.Config) { c.Mode = devnet.ModeSegmented; c.Stress = stress.Set{"omit": 23} }, wantErr: "stress: omit=23, but each payload has 23 parts (segmented)"},
		{name: "omit some parts", mod: func(c *embedded.Config) { c.Mode = mode.Tier3; c.Stress = stress.Set{"omit": 23} }},
		{name: "withholders above half", mod: func(c *embedded.Config) { c.Stress = stress.Set{"withholder": 0.6} }, wantErr: "stress: withholder=0.6: want a share 0..0.5"},
		{name: "unknown stress condition", mod: func(c *embedded.Config) { c.Stress = stress.Set{"withholders": 0.1} }, wantErr: `stress: unknown stress condition "withholders"`},
		{name: "payload size as a stress entry", mod: func(c *embedded.Config) { c.Stress = stress.Set{"payload-size": 4096} }, wantErr: "payload-size is the spec's payload_size"},
		{name: "omit in a one-message mode", mod: func(c *embedded.Config) { c.Mode = mode.Whole; c.Stress = stress.Set{"omit": 1} }, wantErr: "whose payload is one message"},
		{name: "push width below zero", mod: func(c *embedded.Config) { c.PushWidth = -1 }, wantErr: "push_width: -1, want >= 0"},
		{name: "pull window below zero", mod: func(c *embedded.Config) { c.PullWindow = -time.Second }, wantErr: "pull_window: -1s, want >= 0"},
		{name: "loss of every delivery", mod: func(c *embedded.Config) { c.Stress = stress.Set{"loss-data": 1} }, wantErr: "stress: loss-data=1: want a probability 0 ≤ p < 1"},
		{name: "several at once", mod: func(c *embedded.Config) { c.Payloads = 0; c.PTCSize = 0 }, wantErr: "ptc_size: 0"},
		{name: "tier 4 with cards off", mod: func(c *embedded.Config) { c.Mode = mode.Tier4; c.Without = "cancel, window"; c.Aim = "plain" }},
		{name: "an unknown card", mod: func(c *embedded.Config) { c.Mode = mode.Tier4; c.Without = "rarst" }, wantErr: `without: unknown card "rarst"`},
		{name: "an unknown aim", mod: func(c *embedded.Config) { c.Mode = mode.Tier4; c.Aim = "random" }, wantErr: `aim: "random", want safer or plain`},
		{name: "a negative window", mod: func(c *embedded.Config) { c.Mode = mode.Tier4; c.FlightWindow = -1 }, wantErr: "flight_window: -1"},
		{name: "under-reporters in tier 4", mod: func(c *embedded.Config) { c.Mode = mode.Tier4; c.Stress = stress.Set{"under-reporter": 0.25} }},
		{name: "under-reporters without per-peer state", mod: func(c *embedded.Config) { c.Mode = mode.Tier2; c.Stress = stress.Set{"under-reporter": 0.25} },
			wantErr: "stress: under-reporter=0.25 in mode tier2: the mode keeps no state per peer"},
		{name: "padding under-reporters in tier 4", mod: func(c *embedded.Config) { c.Mode = mode.Tier4; c.Stress = stress.Set{"padding-under-reporter": 0.5} }},
		{name: "padding under-reporters without per-peer state", mod: func(c *embedded.Config) { c.Mode = mode.Tier3; c.Stress = stress.Set{"padding-under-reporter": 0.5} },
			wantErr: "stress: padding-under-reporter=0.5 in mode tier3: the mode keeps no state per peer"},
		{name: "unacknowledging withholders in whole-paced", mod: func(c *embedded.Config) {
			c.Mode = mode.WholePaced
			c.Stress = stress.Set{"unacking-withholder": 0.25}
		}},
		{name: "unacknowledging withholders without acknowledgements", mod: func(c *embedded.Config) {
			c.Mode = mode.Tier3
			c.Stress = stress.Set{"unacking-withholder": 0.25}
		}, wantErr: "stress: unacking-withholder=0.25 in mode tier3: the mode asks for no acknowledgements, so one that never acknowledges changes nothing (modes that ask: whole-paced, tier4)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := embedded.DefaultConfig()
			tt.mod(&c)
			err := c.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate() = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
	if _, err := embedded.Preset("nope"); err == nil {
		t.Error(`Preset("nope") succeeded`)
	}
}

// The memory estimate follows the measured peaks (internal/devnet/embedded/README.md) to
// within a third: ci ≈1 GiB, 200 nodes ≈5.2 GiB, 500 nodes ≈12 GiB
// (segmented), ≈3.5–6.9 GiB in the flows model; a 100 000-node network is refused by Validate before the
// estimate matters, and a 20 000-node one needs far more than a machine has.
func TestMemoryEstimate(t *testing.T) {
	study, _ := embedded.Preset(embedded.PresetStudy500)
	n200 := study
	n200.Nodes = 200
	big := study
	big.Nodes = embedded.MaxNodes
	flows := study
	flows.NetModel = "flows"
	tests := []struct {
		name     string
		c        embedded.Config
		lo, hi   float64 // GiB
		contains string
	}{
		{name: "ci", c: embedded.DefaultConfig(), lo: 0.4, hi: 1.4},
		{name: "200 nodes", c: n200, lo: 3.9, hi: 6.9},
		{name: "500 nodes", c: study, lo: 9, hi: 16},
		{name: "500 nodes, flows model", c: flows, lo: 5.5, hi: 9.5, contains: "(flows model)"},
		{name: "limit", c: big, lo: 500, hi: 1e6, contains: "1400000 connection ends"},
	}
	for _, tt := range tests {
		got, how := tt.c.MemoryEstimate()
		gib := float64(got) / (1 << 30)
		if gib < tt.lo || gib > tt.hi || !strings.Contains(how, tt.contains) {
			t.Errorf("%s: estimate %.2f GiB (%s), want %.1f..%.1f", tt.name, gib, how, tt.lo, tt.hi)
		}
	}
}

// TestSeedGlobalRand: this test binary sets randseednop=0, so seeding takes
// and restarts the global stream.
func TestSeedGlobalRand(t *testing.T) {
	if !embedded.SeedGlobalRand(42) {
		t.Fatal("seedGlobalRand(42) reports the global source unseeded")
	}
	a := mathrand.Int63()
	embedded.SeedGlobalRand(42)
	if b := mathrand.Int63(); a != b {
		t.Errorf("same seed, first draws %d and %d", a, b)
	}
}
