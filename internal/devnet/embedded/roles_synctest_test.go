//go:build go1.25

package embedded_test

import (
	"encoding/json"
	"slices"
	"strconv"
	"testing"

	"github.com/segdiff/segdiff/diffusion/role"
	"github.com/segdiff/segdiff/internal/stress"

	segmode "github.com/segdiff/segdiff/diffusion/mode"
	"github.com/segdiff/segdiff/internal/devnet"
	"github.com/segdiff/segdiff/internal/devnet/embedded"
)

// Adversarial roles and builder faults on whole 16-node networks: what the
// results report, and what the honest nodes still achieve.

// TestOmit_synctest: a builder that omits one part. Without a code no
// honest receiver ever completes, and no node ever holds the omitted part
// (each holds at most K−1 distinct parts, the builder never sent it); with
// tier3's code the K−1 parts left still rebuild the payload everywhere.
func TestOmit_synctest(t *testing.T) {
	tests := []struct {
		mode     devnet.Mode
		complete bool
	}{
		{segmode.Segmented, false},
		{segmode.Phase, false},
		{segmode.Tier3, true},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode), func(t *testing.T) {
			c := smallConfig(tt.mode)
			c.Stress = stress.Set{stress.Omit.Name: 1}
			res := synctestSimulate(t, c)
			if len(res.Slots) != c.Payloads {
				t.Fatalf("got %d payload slots, want %d", len(res.Slots), c.Payloads)
			}
			for _, s := range res.Slots {
				slot := strconv.FormatUint(s.Slot, 10)
				if s.Honest != nil {
					t.Errorf("slot %d: Honest = %v, want nil (no adversarial role)", s.Slot, s.Honest)
				}
				for i, d := range s.Completion {
					if i == s.Builder {
						continue
					}
					if done := d >= 0; done != tt.complete {
						t.Errorf("slot %d: %s completion %v, want completed %v", s.Slot, embedded.NodeID(i), d, tt.complete)
					}
					got, ok := gauge(t, res, i, "payload_diffusion_segments_received", map[string]string{"slot": slot})
					if !ok || int(got) > s.Segments-1 {
						t.Errorf("slot %d: %s holds %v distinct parts (present %v), want at most %d of %d: the omitted one never left the builder",
							s.Slot, embedded.NodeID(i), got, ok, s.Segments-1, s.Segments)
					}
					if !tt.complete && int(got) != s.Segments-1 {
						// Every part the builder did send arrives.
						t.Errorf("slot %d: %s holds %v distinct parts, want all %d sent", s.Slot, embedded.NodeID(i), got, s.Segments-1)
					}
				}
				stranded := len(s.Stranded())
				if tt.complete && (stranded != 0 || s.NetworkCompletion < 0) {
					t.Errorf("slot %d: %d stranded, network completion %v; want none stranded and a completion", s.Slot, stranded, s.NetworkCompletion)
				}
				if !tt.complete && (stranded != c.Nodes-1 || s.NetworkCompletion >= 0) {
					t.Errorf("slot %d: %d stranded, network completion %v; want all %d receivers stranded and no completion", s.Slot, stranded, s.NetworkCompletion, c.Nodes-1)
				}
			}
		})
	}
}

// roleHolders checks that exactly want nodes report role r in the results
// (and in their JSON), that every slot marks exactly them dishonest, and
// returns them.
func roleHolders(t *testing.T, res *embedded.Result, r devnet.Role, want int) []int {
	t.Helper()
	var held []int
	for i, n := range res.Nodes {
		if slices.Contains(n.Roles, r) {
			held = append(held, i)
			if i == res.Builder {
				t.Errorf("the builder %s holds role %s", n.ID, r)
			}
		}
	}
	if len(held) != want {
		t.Fatalf("%d nodes hold role %s (%v), want %d", len(held), r, held, want)
	}
	b, err := json.Marshal(res.Run)
	if err != nil {
		t.Fatalf("marshal results: %v", err)
	}
	var back struct {
		Nodes []struct {
			Roles []string `json:"roles"`
		} `json:"nodes"`
		Slots []struct {
			Honest []bool `json:"honest"`
		} `json:"slots"`
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("unmarshal results: %v", err)
	}
	for j, s := range res.Slots {
		if len(s.Honest) != len(res.Nodes) || len(back.Slots[j].Honest) != len(res.Nodes) {
			t.Fatalf("slot %d: Honest has %d entries (%d in JSON), want %d", s.Slot, len(s.Honest), len(back.Slots[j].Honest), len(res.Nodes))
		}
		for i := range res.Nodes {
			dishonest := slices.Contains(held, i)
			if s.Honest[i] == dishonest || back.Slots[j].Honest[i] == dishonest {
				t.Errorf("slot %d: %s honest %v (JSON %v), role %s held %v", s.Slot, embedded.NodeID(i), s.Honest[i], back.Slots[j].Honest[i], r, dishonest)
			}
			if s.Receiver(i) != (i != s.Builder && !dishonest) {
				t.Errorf("slot %d: %s counted as receiver %v", s.Slot, embedded.NodeID(i), s.Receiver(i))
			}
		}
	}
	for _, i := range held {
		if !slices.Contains(back.Nodes[i].Roles, string(r)) {
			t.Errorf("%s: JSON roles %v lack %s", embedded.NodeID(i), back.Nodes[i].Roles, r)
		}
	}
	return held
}

// honestComplete checks that every honest receiver completes every slot and
// that the network completion is known.
func honestComplete(t *testing.T, res *embedded.Result) {
	t.Helper()
	for _, s := range res.Slots {
		if st := s.Stranded(); len(st) > 0 {
			t.Errorf("slot %d: honest receivers never completed: %v", s.Slot, st)
		}
		if s.NetworkCompletion < 0 {
			t.Errorf("slot %d: no network completion", s.Slot)
		}
	}
}

// TestForwardNothing_synctest: silent nodes (segmented-batch) and mute
// nodes (phase) send no payload data in any slot, yet receive the payload
// themselves; the results name them and every honest receiver completes.
// 0.25 of the 15 non-builder nodes is 3.
func TestForwardNothing_synctest(t *testing.T) {
	tests := []struct {
		mode devnet.Mode
		role devnet.Role
		set  func(*embedded.Config)
	}{
		{segmode.SegmentedBatch, devnet.Role(role.Silent.Name), func(c *embedded.Config) { c.Stress = stress.Set{role.Silent.Name: 0.25} }},
		{segmode.Phase, devnet.Role(role.Mute.Name), func(c *embedded.Config) { c.Stress = stress.Set{role.Mute.Name: 0.25} }},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode)+"/"+string(tt.role), func(t *testing.T) {
			c := smallConfig(tt.mode)
			tt.set(&c)
			res := synctestSimulate(t, c)
			held := roleHolders(t, res, tt.role, int(0.25*float64(c.Nodes-1)))
			honestComplete(t, res)
			for _, s := range res.Slots {
				for _, i := range held {
					if s.SentBytes[i] != 0 || !s.FirstSentAt[i].IsZero() {
						t.Errorf("slot %d: %s %s sent %d payload data bytes (first at %v), want none", s.Slot, tt.role, embedded.NodeID(i), s.SentBytes[i], s.FirstSentAt[i])
					}
					if s.Completion[i] < 0 {
						t.Errorf("slot %d: %s %s never held the payload itself", s.Slot, tt.role, embedded.NodeID(i))
					}
				}
			}
		})
	}
}

// TestWithholders_synctest: withholders (whole-pulls, where IWANT pulls
// matter) answer no request; the results expose no per-request count, so
// what is checked here is that they are named, marked dishonest, and that
// every honest receiver completes through the honest nodes. The refusal
// itself is unit-tested in package diffusion (TestInspectRPCRoles).
func TestWithholders_synctest(t *testing.T) {
	c := smallConfig(segmode.WholePulls)
	c.Stress = stress.Set{role.Withholder.Name: 0.25}
	res := synctestSimulate(t, c)
	roleHolders(t, res, devnet.Role(role.Withholder.Name), int(0.25*float64(c.Nodes-1)))
	honestComplete(t, res)
}
