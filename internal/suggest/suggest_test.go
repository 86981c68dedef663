package suggest_test

import (
	"testing"

	"github.com/segdiff/segdiff/internal/suggest"
)

func TestNearest(t *testing.T) {
	flags := []string{"nodes", "degree", "mode", "seed", "json", "jobs"}
	vars := []string{"SEGDIFF_PRESET", "SEGDIFF_PREFETCH", "SEGDIFF_SEED", "SEGDIFF_BUDGET_COMPLETION_P50"}
	tests := []struct {
		name       string
		got        string
		candidates []string
		want       string
		wantOK     bool
	}{
		{name: "transposition", got: "nodse", candidates: flags, want: "nodes", wantOK: true},
		{name: "missing letter", got: "degre", candidates: flags, want: "degree", wantOK: true},
		{name: "variable transposition", got: "SEGDIFF_PRESTE", candidates: vars, want: "SEGDIFF_PRESET", wantOK: true},
		{name: "variable missing letter", got: "SEGDIFF_BUDGET_COMPLETON_P50", candidates: vars, want: "SEGDIFF_BUDGET_COMPLETION_P50", wantOK: true},
		{name: "exact", got: "seed", candidates: flags, want: "seed", wantOK: true},
		{name: "nothing close", got: "frobnicate", candidates: flags},
		{name: "short words need a close match", got: "xy", candidates: flags},
		{name: "no candidates", got: "nodes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := suggest.Nearest(tt.got, tt.candidates)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("Nearest(%q) = %q, %v; want %q, %v", tt.got, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestWithin(t *testing.T) {
	vars := []string{"DEVNET"}
	tests := []struct {
		got   string
		edits int
		want  string
	}{
		{got: "DEVNT", edits: 1, want: "DEVNET"},
		{got: "DEVENT", edits: 1, want: "DEVNET"},
		{got: "DEVNETS", edits: 1, want: "DEVNET"},
		{got: "DEVICE", edits: 1},                 // three edits: Nearest would take it
		{got: "DEVNT", edits: 0},                  // one edit over the allowance
		{got: "DEVICE", edits: 3, want: "DEVNET"}, // what Within guards against
	}
	for _, tt := range tests {
		got, ok := suggest.Within(tt.got, vars, tt.edits)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("Within(%q, %d) = %q, %v; want %q", tt.got, tt.edits, got, ok, tt.want)
		}
	}
}

func TestDidYouMean(t *testing.T) {
	if got := suggest.DidYouMean("nodse", []string{"nodes"}, "-"); got != "; did you mean -nodes?" {
		t.Errorf("DidYouMean = %q", got)
	}
	if got := suggest.DidYouMean("frobnicate", []string{"nodes"}, "-"); got != "" {
		t.Errorf("DidYouMean for nothing close = %q, want empty", got)
	}
}
