package embedded_test

import (
	"github.com/segdiff/segdiff/diffusion/mode"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/segdiff/segdiff/internal/devnet"
	"github.com/segdiff/segdiff/internal/devnet/embedded"
	"github.com/segdiff/segdiff/internal/stress"
)

// Every field with a doc tag is a key, named by its flag tag or its JSON
// key; every stress condition is a key; nothing else is.
func TestKeys(t *testing.T) {
	names := embedded.KeyNames()
	for _, want := range []string{"nodes", "mode", "seed", "datacenter-share", "builder-class", "node-class", "custom-up",
		"custom-down", "payload-size", "dlazy", "pull-ban", "slot", "withholder", "silent", "mute", "omit", "loss-data", "uplink-spread"} {
		if !slices.Contains(names, want) {
			t.Errorf("key %s missing from %v", want, names)
		}
	}
	for _, not := range []string{"json", "serve", "preset", "stress", "install-delay-overrides", "heap-profile", "gossip-lazy"} {
		if slices.Contains(names, not) {
			t.Errorf("%s is not a key of the run spec", not)
		}
	}
	seen := map[string]bool{}
	for _, k := range embedded.Keys() {
		if seen[k.Name] {
			t.Errorf("key %s listed twice", k.Name)
		}
		seen[k.Name] = true
		if k.Doc == "" {
			t.Errorf("key %s has no usage", k.Name)
		}
	}
	// Every settable field has a doc tag, so none is left out by mistake.
	ty := reflect.TypeFor[embedded.Config]()
	for i := range ty.NumField() {
		f := ty.Field(i)
		if _, doc := f.Tag.Lookup("doc"); !doc && f.Tag.Get("flag") != "-" && f.Tag.Get("json") != "-" {
			t.Errorf("field %s has neither a doc tag nor flag:\"-\"", f.Name)
		}
	}
}

func TestSetAndGet(t *testing.T) {
	tests := []struct {
		key, value string
		check      func(embedded.Config) bool
		wantErr    string
	}{
		{key: "nodes", value: "64", check: func(c embedded.Config) bool { return c.Nodes == 64 }},
		{key: "dlazy", value: "0", check: func(c embedded.Config) bool { return c.GossipLazy == 0 }},
		{key: "gossip-factor", value: "0.5", check: func(c embedded.Config) bool { return c.GossipFactor == 0.5 }},
		{key: "slot", value: "6s", check: func(c embedded.Config) bool { return c.SlotDuration == 6*time.Second }},
		{key: "payload-due-bps", value: "6000", check: func(c embedded.Config) bool { return c.PayloadDueBPS == 6000 }},
		{key: "mode", value: "tier3", check: func(c embedded.Config) bool { return c.Mode == "tier3" }},
		{key: "node-class", value: "datacenter", check: func(c embedded.Config) bool { return c.NodeClass == devnet.LinkDatacenter }},
		{key: "payload-size", value: "2097152", check: func(c embedded.Config) bool { return c.PayloadSize == 2097152 && len(c.Stress) == 0 }},
		{key: "withholder", value: "50%", check: func(c embedded.Config) bool { return c.Stress["withholder"] == 0.5 }},
		{key: "loss-data", value: "0.05", check: func(c embedded.Config) bool { return c.Stress[stress.LossData.Name] == 0.05 }},
		{key: "omit", value: "4", check: func(c embedded.Config) bool { return c.Stress["omit"] == 4 }},
		{key: "nodse", value: "64", wantErr: `"nodse" is not a key of the run spec; did you mean nodes?`},
		{key: "nodes", value: "many", wantErr: "not an integer"},
		{key: "slot", value: "12", wantErr: "not a duration"},
		{key: "omit", value: "4%", wantErr: "omit is a whole number"},
		{key: "mute", value: "0.7", wantErr: "want a share 0..0.5"},
	}
	for _, tt := range tests {
		t.Run(tt.key+"="+tt.value, func(t *testing.T) {
			c := embedded.DefaultConfig()
			err := c.Set(tt.key, tt.value)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Set = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !tt.check(c) {
				t.Fatalf("Set = %v; config %+v", err, c)
			}
			if got := c.Get(tt.key); got == "" {
				t.Errorf("Get(%s) is empty after Set", tt.key)
			}
		})
	}
}

// The suite's devnet configuration becomes one validated run spec, its
// typed stress applied as parsed: payload-size sets the spec's field, the
// other conditions its stress.
func TestSpecOf(t *testing.T) {
	spec, err := embedded.SpecOf(devnet.Config{Mode: devnet.ModeSegmented, Seed: 9,
		Stress: stress.Set{"payload-size": 2097152, "omit": 4, "withholder": 0.25}})
	if err != nil {
		t.Fatal(err)
	}
	if spec.Mode != devnet.ModeSegmented || spec.Seed != 9 || spec.Nodes != 32 || spec.PayloadSize != 2097152 ||
		spec.Stress.String() != "omit=4,withholder=0.25" {
		t.Errorf("spec %+v", spec)
	}
	for _, tt := range []struct {
		cfg  devnet.Config
		want string
	}{
		{devnet.Config{Stress: stress.Set{"withholders": 0.5}}, `"withholders" is not a key of the run spec; did you mean withholder?`},
		{devnet.Config{Preset: "bogus"}, `unknown embedded preset "bogus"`},
		{devnet.Config{Mode: "whole", Stress: stress.Set{"omit": 1}}, "whose payload is one message"},
		{devnet.Config{Nodes: 2}, "nodes: 2, want 3.."},
	} {
		if _, err := embedded.SpecOf(tt.cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("SpecOf(%+v) = %v, want %q", tt.cfg, err, tt.want)
		}
	}
}

// A spec file round-trips, and a typo'd key in it is named.
func TestSpecFile(t *testing.T) {
	dir := t.TempDir()
	want, _ := embedded.SpecOf(devnet.Config{Mode: "tier3", Stress: stress.Set{"loss-data": 0.05}})
	path := filepath.Join(dir, "spec.json")
	if err := embedded.WriteSpec(path, want); err != nil {
		t.Fatal(err)
	}
	got, err := embedded.ReadSpec(path)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("ReadSpec = %+v, %v; want %+v", got, err, want)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"nodes": 32, "nodse": 3}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := embedded.ReadSpec(bad); err == nil || !strings.Contains(err.Error(), `unknown field "nodse"`) {
		t.Errorf("ReadSpec of a typo = %v", err)
	}
}

// Every stress condition is one the simulation applies: a role's share
// (placed by the seed) or a fault with an effect. A condition registered in
// package stress without one is refused by Validate, naming it, instead of
// running as if it were absent.
func TestEveryStressConditionIsApplied(t *testing.T) {
	values := map[stress.Kind]string{stress.Share: "10%", stress.Probability: "5%", stress.Spread: "20%",
		stress.Count: "1", stress.Bytes: "131072", stress.Mbps: "20"}
	for _, cond := range stress.Conditions() {
		c := embedded.DefaultConfig()
		c.Mode = mode.Tier4 // every role means something in tier 4
		if err := c.Set(cond.Name, values[cond.Kind]); err != nil {
			t.Fatalf("%s: %v", cond.Name, err)
		}
		if err := c.Validate(); err != nil {
			t.Errorf("%s=%s: %v", cond.Name, values[cond.Kind], err)
		}
	}
	jitter := stress.Condition{Name: "jitter", Doc: "extra latency jitter (0..0.9)", Kind: stress.Spread}
	if err := stress.Register(jitter); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stress.Unregister(jitter.Name) })
	c := embedded.DefaultConfig()
	if err := c.Set(jitter.Name, "20%"); err != nil {
		t.Fatalf("a registered condition is a key of the run spec: %v", err)
	}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "jitter: package stress registers this condition, but the embedded devnet does not apply it") {
		t.Errorf("Validate of a condition without an effect = %v", err)
	}
}

// The presets are the ci network and the design's three 500-node networks;
// each validates as it is.
func TestPresets(t *testing.T) {
	tests := []struct {
		name    string
		nodes   int
		dc      float64
		builder devnet.LinkClass
	}{
		{embedded.PresetCI, 32, 0, devnet.LinkHome},
		{embedded.PresetStudy500, 500, 0, devnet.LinkHome},
		{embedded.PresetStudy500DC20, 500, 0.2, devnet.LinkHome},
		{embedded.PresetStudy500DC20DCB, 500, 0.2, devnet.LinkDatacenter},
	}
	if len(tests) != len(embedded.Presets) {
		t.Fatalf("%d presets tested, %d listed: %v", len(tests), len(embedded.Presets), embedded.Presets)
	}
	for _, tt := range tests {
		c, err := embedded.Preset(tt.name)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if c.Nodes != tt.nodes || c.DatacenterShare != tt.dc || c.BuilderClass != tt.builder || c.NodeClass != devnet.LinkHome {
			t.Errorf("%s: %d nodes, datacenter share %v, builder %s, nodes %s", tt.name, c.Nodes, c.DatacenterShare, c.BuilderClass, c.NodeClass)
		}
		if err := c.Validate(); err != nil {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
	if _, err := embedded.Preset("study-1000"); err == nil || !strings.Contains(err.Error(), "study-500-dc20-dcb") {
		t.Errorf("unknown preset: %v, want an error listing the presets", err)
	}
}
