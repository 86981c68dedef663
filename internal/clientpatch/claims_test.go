package clientpatch_test

import (
	"strings"
	"testing"

	"github.com/segdiff/segdiff/internal/clientpatch"
	"github.com/segdiff/segdiff/internal/repo"
)

// TestCheckClaims holds the repository's manifest to what nodes of
// whole.yaml (prysm-gloas) and segmented.yaml (prysm-segmented) export.
func TestCheckClaims(t *testing.T) {
	m, err := clientpatch.LoadFile(repo.Path(t, clientpatch.DefaultPath))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		params   string
		nodes    []clientpatch.Observed
		mismatch []string // "node source" pairs that must not hold
		wantErr  string
	}{
		{name: "stock prysm as it is", params: "network-params/whole.yaml",
			nodes: []clientpatch.Observed{{Node: "cl-1", Type: "prysm"}, {Node: "cl-2", Type: "prysm"}}},
		{name: "stock prysm exporting a byte counter it does not claim", params: "network-params/whole.yaml",
			nodes:    []clientpatch.Observed{{Node: "cl-1", Type: "prysm", TopicBytes: true}},
			mismatch: []string{"cl-1 topic-bytes"}},
		{name: "patched prysm without the contract it claims", params: "network-params/segmented.yaml",
			nodes:    []clientpatch.Observed{{Node: "cl-1", Type: "prysm", TopicBytes: true}},
			mismatch: []string{"cl-1 contract"}},
		{name: "a node no entry of the params describes", params: "network-params/whole.yaml",
			nodes: []clientpatch.Observed{{Node: "cl-9", Type: "teku"}}, wantErr: "node cl-9 (teku): no cl entry"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			claims, err := m.CheckClaims(tt.params, tt.nodes)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(claims) != 2*len(tt.nodes) {
				t.Fatalf("%d claims, want 2 per node", len(claims))
			}
			var got []string
			for _, c := range claims {
				if !c.Holds() {
					got = append(got, c.Node+" "+c.Source)
				}
			}
			if strings.Join(got, ",") != strings.Join(tt.mismatch, ",") {
				t.Errorf("mismatches %v, want %v", got, tt.mismatch)
			}
		})
	}
}
