package main

import (
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/segdiff/segdiff/internal/devnet"
	"github.com/segdiff/segdiff/internal/devnet/embedded"
)

func TestSimFlagsConfigs(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    int // runs
		check   func(t *testing.T, f *simFlags)
		wantErr string
	}{
		{name: "ci default", args: nil, want: 1},
		{name: "modes × seeds", args: []string{"--mode", "whole,segmented", "--seed", "7,8,9"}, want: 6},
		{name: "study preset with overrides", args: []string{"--preset", "study-500", "--nodes", "200", "--install-delay", "50ms", "--builder-class", "datacenter"}, want: 1,
			check: func(t *testing.T, f *simFlags) {
				cfgs, _ := f.configs()
				c := cfgs[0]
				if c.Nodes != 200 || c.Degree != 70 || c.InstallDelay != 50*time.Millisecond || c.BuilderClass != devnet.LinkDatacenter {
					t.Errorf("config = nodes %d degree %d install %v builder %s", c.Nodes, c.Degree, c.InstallDelay, c.BuilderClass)
				}
			}},
		{name: "gossip defaults", args: nil, want: 1,
			check: func(t *testing.T, f *simFlags) {
				cfgs, _ := f.configs()
				if c := cfgs[0]; c.GossipLazy != 6 || c.GossipFactor != 0.25 {
					t.Errorf("dlazy %d gossip factor %v, want 6 and 0.25", c.GossipLazy, c.GossipFactor)
				}
			}},
		{name: "gossip off", args: []string{"--dlazy", "0", "--gossip-factor", "0"}, want: 1,
			check: func(t *testing.T, f *simFlags) {
				cfgs, _ := f.configs()
				if c := cfgs[0]; c.GossipLazy != 0 || c.GossipFactor != 0 {
					t.Errorf("dlazy %d gossip factor %v, want 0 and 0", c.GossipLazy, c.GossipFactor)
				}
			}},
		{name: "negative dlazy", args: []string{"--dlazy", "-3"}, wantErr: "--dlazy (gossip_lazy): -3, want >= 0"},
		{name: "gossip factor above one", args: []string{"--gossip-factor", "1.5"}, wantErr: "--gossip-factor (gossip_factor): 1.5"},
		{name: "zero nodes is not the default", args: []string{"--nodes", "0"}, wantErr: "--nodes (nodes): 0, want 3.."},
		{name: "zero payloads is not the default", args: []string{"--payloads", "0"}, wantErr: "--payloads (payloads): 0"},
		{name: "degree above the nodes", args: []string{"--nodes", "8", "--degree", "20"}, wantErr: "--degree (degree): 20, but 8 nodes allow at most 7"},
		{name: "degree below Dhi on few nodes", args: []string{"--nodes", "8"}, wantErr: "--degree (degree): 20, but 8 nodes allow at most 7"},
		{name: "odd product", args: []string{"--nodes", "33", "--degree", "19"}, wantErr: "is odd"},
		{name: "several problems at once", args: []string{"--payloads", "-1", "--window", "0s"}, wantErr: "--window (window): 0s"},
		{name: "builder moved", args: []string{"--builder", "5"}, want: 1},
		{name: "unknown mode", args: []string{"--mode", "flood"}, wantErr: "unknown diffusion mode"},
		{name: "bad seed", args: []string{"--seed", "x"}, wantErr: `--seed "x": not an integer`},
		{name: "serve needs one run", args: []string{"--seed", "1,2", "--serve", "127.0.0.1:0"}, wantErr: "exactly one run"},
		{name: "invalid config", args: []string{"--degree", "10"}, wantErr: "must exceed the mesh's Dhi=12"},
		{name: "unknown preset", args: []string{"--preset", "huge"}, wantErr: "unknown embedded preset"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := parseSimFlags(tt.args, io.Discard)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			cfgs, err := f.configs()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("configs() error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("configs(): %v", err)
			}
			if len(cfgs) != tt.want {
				t.Fatalf("%d runs, want %d", len(cfgs), tt.want)
			}
			if tt.check != nil {
				tt.check(t, f)
			}
		})
	}
}

// Impossible sizes are refused before anything starts, with the memory
// estimate. (How fast: `time segdiff sim --nodes 100000`, 0.1 s; speed is
// not asserted in a unit test.)
func TestSimRefusesImpossibleSizes(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "100000 nodes", args: []string{"--nodes", "100000"}, want: "--nodes (nodes): 100000, want 3..20000 (100000 nodes would need an estimated "},
		{name: "above the machine", args: []string{"--preset", "study-500", "--nodes", "20000", "--max-memory", "24GiB"},
			want: "GiB (20000 nodes × degree 70 = 1400000 connection ends"},
		{name: "above --max-memory", args: []string{"--max-memory", "100MiB"}, want: "more than the 100.0 MiB of --max-memory"},
		{name: "bad --max-memory", args: []string{"--max-memory", "lots"}, want: `--max-memory: "lots" is not a size`},
		{name: "bad integer", args: []string{"--nodes", "many"}, want: `invalid value "many" for flag -nodes: not an integer`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr strings.Builder
			if code := runSim(t.Context(), tt.args, io.Discard, &stderr); code != 2 {
				t.Fatalf("exit %d, want 2 (refused); stderr %q", code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("stderr %q lacks %q", stderr.String(), tt.want)
			}
		})
	}
}

func TestParseBytes(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    int64
		wantErr bool
	}{
		{name: "plain count", in: "1000", want: 1000},
		{name: "bytes", in: "512B", want: 512},
		{name: "KiB", in: "64KiB", want: 64 << 10},
		{name: "MiB", in: "512MiB", want: 512 << 20},
		{name: "GiB", in: "12GiB", want: 12 << 30},
		{name: "TiB", in: "1TiB", want: 1 << 40},
		{name: "kB is decimal", in: "64kB", want: 64_000},
		{name: "MB is decimal", in: "512MB", want: 512_000_000},
		{name: "GB is decimal", in: "12GB", want: 12_000_000_000},
		{name: "G is GB", in: "1.5G", want: 1_500_000_000},
		{name: "Gi is GiB", in: "8Gi", want: 8 << 30},
		{name: "case and spaces", in: " 12 gib ", want: 12 << 30},
		{name: "fraction of a binary unit", in: "1.5GiB", want: 3 << 29},
		{name: "junk unit", in: "12 apples", wantErr: true},
		{name: "empty", in: "", wantErr: true},
		{name: "negative", in: "-1GiB", wantErr: true},
		{name: "beyond int64", in: "9EiB", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseBytes(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseBytes(%q) = %d, %v; wantErr %v", tt.in, got, err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("parseBytes(%q) = %d, want %d", tt.in, got, tt.want)
			}
			if err != nil && !strings.Contains(err.Error(), "12GiB") {
				t.Errorf("error %q suggests no valid size", err)
			}
		})
	}
}

func TestSimRejectsNegativeProcs(t *testing.T) {
	var stderr strings.Builder
	if code := runSim(t.Context(), []string{"--procs", "-1"}, io.Discard, &stderr); code != 2 {
		t.Fatalf("exit %d, want 2 (usage)", code)
	}
	if !strings.Contains(stderr.String(), "--procs -1") {
		t.Errorf("stderr %q does not name the flag", stderr.String())
	}
}

// A spec file is read as it is and checked once, with the flags applied
// over it: what the suite's backend and a sweep cell hand the sim.
func TestSimSpecFileIsValidated(t *testing.T) {
	spec := embedded.DefaultConfig()
	spec.Nodes = 2
	path := filepath.Join(t.TempDir(), "spec.json")
	if err := embedded.WriteSpec(path, spec); err != nil {
		t.Fatal(err)
	}
	f, err := parseSimFlags([]string{"--spec", path}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.configs(); err == nil || !strings.Contains(err.Error(), "--spec "+path) || !strings.Contains(err.Error(), "nodes): 2, want 3..") {
		t.Errorf("configs() of a spec with 2 nodes: %v", err)
	}
	if f, err = parseSimFlags([]string{"--spec", path, "--nodes", "16", "--degree", "14"}, io.Discard); err != nil {
		t.Fatal(err)
	}
	if cfgs, err := f.configs(); err != nil || cfgs[0].Nodes != 16 {
		t.Errorf("a flag over the spec: %v, %v", cfgs, err)
	}
}
