package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/segdiff/segdiff/devnet"
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
		{name: "study preset with overrides", args: []string{"--preset", "study-500", "--nodes", "64", "--install-delay", "50ms", "--builder-class", "datacenter"}, want: 1,
			check: func(t *testing.T, f *simFlags) {
				cfgs, _ := f.configs()
				c := cfgs[0]
				if c.Nodes != 64 || c.Degree != 70 || c.InstallDelay != 50*time.Millisecond || c.BuilderClass != devnet.LinkDatacenter {
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
		{name: "negative dlazy", args: []string{"--dlazy", "-3"}, wantErr: "--dlazy -3"},
		{name: "gossip factor above one", args: []string{"--gossip-factor", "1.5"}, wantErr: "gossip_factor: 1.5"},
		{name: "unknown mode", args: []string{"--mode", "flood"}, wantErr: "unknown diffusion mode"},
		{name: "bad seed", args: []string{"--seed", "x"}, wantErr: "is not an integer"},
		{name: "serve needs one run", args: []string{"--seed", "1,2", "--serve", "127.0.0.1:0"}, wantErr: "exactly one run"},
		{name: "invalid config", args: []string{"--degree", "10"}, wantErr: "must exceed Dhi"},
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

func TestSimRejectsNegativeProcs(t *testing.T) {
	var stderr strings.Builder
	if code := runSim(t.Context(), []string{"--procs", "-1"}, io.Discard, &stderr); code != 2 {
		t.Fatalf("exit %d, want 2 (usage)", code)
	}
	if !strings.Contains(stderr.String(), "--procs -1") {
		t.Errorf("stderr %q does not name the flag", stderr.String())
	}
}
