package steps_test

import (
	"context"
	"fmt"
	"time"

	"github.com/segdiff/segdiff/diffusion/mode"
	"github.com/segdiff/segdiff/internal/devnet"
	"github.com/segdiff/segdiff/metrics/metricstest"
)

// fakeBackend is registered for these tests only. Preset "fake-missing":
// node n03 never exports payload_diffusion_completed_timestamp_seconds;
// "fake-noptc": no PTC votes for slot 5; "fake-small": the builder's
// payloads are 4 KiB, an unloaded chain's; any other preset ("fake", the
// features' "ci"): every node exports every series.
const fakeBackend = "fake-steps-test"

func init() { devnet.Register(fakeBackend, openFake) }

// fakeDevnet serves one exposition per node (package metricstest): a
// builder b00 revealing slots 1..6 and eight receivers whose completion
// grows with their index; whole mode is five times slower and costs three
// times the bytes, tier4 costs 0.7 times the bytes (the comparison rows'
// lighter mode).
type fakeDevnet struct {
	noPTC  uint64 // slot without votes, 0 for none
	served *metricstest.Served
	nodes  []devnet.Node
	timing devnet.Timing
}

const (
	fakeSlots      = 6
	fakeReceivers  = 8
	fakeCompressed = 746_000
)

func openFake(_ context.Context, cfg devnet.Config) (devnet.Devnet, error) {
	if cfg.Preset == "" {
		return nil, fmt.Errorf("fake backend: no preset")
	}
	net := metricstest.Network{Mode: string(cfg.Mode), Slots: fakeSlots, Receivers: fakeReceivers, Compressed: fakeCompressed}
	switch cfg.Mode {
	case devnet.ModeWhole:
		net.Slowdown, net.BytesFactor = 5, 3
	case devnet.Mode(mode.Tier4):
		net.BytesFactor = 0.7
	}
	f := &fakeDevnet{timing: devnet.Timing{Genesis: net.SlotStart(0), SlotDuration: time.Second, PayloadDueBPS: 5000}}
	if cfg.Preset == "fake-noptc" {
		f.noPTC = 5
	}
	// A stress configuration acts as far as a fake can: payload-size sets
	// the reported raw size, and omit leaves every receiver stranded unless
	// the mode's parity spares the omitted parts.
	stress := cfg.Stress
	info, _ := mode.Lookup(mode.Mode(cfg.Mode))
	stranded := stress["omit"] > 0 && !info.Coded
	net.RawSize = func(slot uint64) int {
		switch {
		case cfg.Preset == "fake-small":
			return 4096 + int(slot)
		case stress["payload-size"] > 0:
			return int(stress["payload-size"])
		}
		return 1 << 20
	}
	net.Incomplete = func(id string) bool { return stranded || cfg.Preset == "fake-missing" && id == "n03" }
	var err error
	if f.served, err = net.Serve(); err != nil {
		return nil, err
	}
	for _, n := range f.served.Nodes {
		node := devnet.Node{ID: n.ID, Roles: []devnet.Role{devnet.RoleNode}, LinkClass: devnet.LinkHome, Client: "fake", MetricsURL: n.MetricsURL}
		if n.Builder {
			node.Roles = []devnet.Role{devnet.RoleBuilder, devnet.RoleProposer}
		}
		if n.Datacenter {
			node.LinkClass = devnet.LinkDatacenter
		}
		f.nodes = append(f.nodes, node)
	}
	return f, nil
}

func (f *fakeDevnet) Backend() string                               { return fakeBackend }
func (f *fakeDevnet) Nodes(context.Context) ([]devnet.Node, error)  { return f.nodes, nil }
func (f *fakeDevnet) Timing(context.Context) (devnet.Timing, error) { return f.timing, nil }
func (f *fakeDevnet) PrometheusURL() string                         { return "" }
func (f *fakeDevnet) Close() error                                  { f.served.Close(); return nil }
func (f *fakeDevnet) PTC(_ context.Context, slot uint64) (devnet.PTCVotes, error) {
	if slot > fakeSlots || slot == f.noPTC {
		return devnet.PTCVotes{}, devnet.ErrNoVotes
	}
	return devnet.PTCVotes{Slot: slot, Size: 512, PayloadPresent: 400 + int(slot), Source: "fake"}, nil
}
