package assertions_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/segdiff/segdiff/assertions"
)

// sized is a network whose builder revealed slots 1..4 with the given raw
// sizes (0: no size reading for that slot).
func sized(sizes ...float64) assertions.Network {
	series := map[S]map[uint64]float64{assertions.SeriesReveal: {}, assertions.SeriesPayloadRaw: {}}
	for i, s := range sizes {
		slot := uint64(i + 1)
		series[assertions.SeriesReveal][slot] = 100 + float64(slot)
		if s > 0 {
			series[assertions.SeriesPayloadRaw][slot] = s
		}
	}
	return assertions.Network{Nodes: []assertions.Node{node("b", "datacenter", true, series), {ID: "r"}}}
}

func TestPayloadSizesAtLeast(t *testing.T) {
	const budget = 0.9 * (1 << 20)
	tests := []struct {
		name     string
		net      assertions.Network
		slots    []uint64
		pass     bool
		wantMsg  string // in the verdict or the extraction error
		wantMiss bool
	}{
		{name: "full payloads", net: sized(1<<20, 1<<20, 1_040_000, 1<<20), slots: []uint64{2, 3, 4}, pass: true},
		{name: "empty chain", net: sized(1<<20, 4096, 4120, 1<<20), slots: []uint64{2, 3, 4},
			wantMsg: "raw payload = 4096 B, budget >= 943718 B: FAILED (3 samples over 1 nodes x 3 slots); worst: b (datacenter) 4096 B at slot 2, b (datacenter) 4120 B at slot 3"},
		{name: "size missing", net: sized(1<<20, 1<<20, 0, 1<<20), slots: []uint64{2, 3, 4}, wantMiss: true,
			wantMsg: "node b: series payload_diffusion_payload_size_bytes{encoding=\"raw\"} has no value for slot 3"},
		{name: "slot not revealed", net: sized(1<<20, 1<<20), slots: []uint64{2, 7}, wantMiss: true, wantMsg: "slot 7"},
		{name: "no slots", net: sized(1 << 20), slots: nil, wantMsg: "no slots selected"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			samples, err := assertions.PayloadSizes(tt.net, tt.slots)
			if err != nil {
				var miss *assertions.MissingReadings
				if tt.wantMiss != errors.As(err, &miss) || !strings.Contains(err.Error(), tt.wantMsg) {
					t.Fatalf("PayloadSizes error = %v, want %q (missing readings %v)", err, tt.wantMsg, tt.wantMiss)
				}
				return
			}
			v := assertions.EverySlotAtLeast("raw payload", assertions.UnitBytes, samples, budget)
			if v.Pass != tt.pass || !strings.Contains(v.String(), tt.wantMsg) {
				t.Fatalf("verdict %s, want pass %v containing %q", v, tt.pass, tt.wantMsg)
			}
		})
	}
	if v := assertions.EverySlotAtLeast("x", assertions.UnitBytes, nil, 1); v.Pass || v.Reason == "" {
		t.Errorf("no samples: %+v, want a failure with a reason", v)
	}
}
