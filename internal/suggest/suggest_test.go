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

func TestDidYouMean(t *testing.T) {
	if got := suggest.DidYouMean("nodse", []string{"nodes"}, "-"); got != "; did you mean -nodes?" {
		t.Errorf("DidYouMean = %q", got)
	}
	if got := suggest.DidYouMean("frobnicate", []string{"nodes"}, "-"); got != "" {
		t.Errorf("DidYouMean for nothing close = %q, want empty", got)
	}
}
