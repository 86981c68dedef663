package steps

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/segdiff/segdiff/metrics"
	"github.com/segdiff/segdiff/metrics/metricstest"

	"github.com/segdiff/segdiff/assertions"
	"github.com/segdiff/segdiff/internal/devnet"
	"github.com/segdiff/segdiff/internal/stress"
)

func TestParseBudget(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		unit    assertions.Unit
		want    float64
		wantErr bool
	}{
		{name: "seconds", text: "3s", unit: assertions.UnitSeconds, want: 3},
		{name: "milliseconds", text: "10ms", unit: assertions.UnitSeconds, want: 0.01},
		{name: "bare number is not a duration", text: "3", unit: assertions.UnitSeconds, wantErr: true},
		{name: "percent", text: "95%", unit: assertions.UnitShare, want: 0.95},
		{name: "fraction", text: "0.9", unit: assertions.UnitShare, want: 0.9},
		{name: "share above 100%", text: "120%", unit: assertions.UnitShare, wantErr: true},
		{name: "copies", text: "1.4", unit: assertions.UnitCopies, want: 1.4},
		{name: "ratio with x", text: "3x", unit: assertions.UnitRatio, want: 3},
		{name: "trailing junk", text: "3abc", unit: assertions.UnitCopies, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseBudget(tc.text, tc.unit)
			if (err != nil) != tc.wantErr {
				t.Fatalf("parseBudget(%q) error = %v, wantErr %v", tc.text, err, tc.wantErr)
			}
			if !tc.wantErr && math.Abs(got-tc.want) > 1e-12 {
				t.Fatalf("parseBudget(%q) = %v, want %v", tc.text, got, tc.want)
			}
		})
	}
}

func TestEnvBudget(t *testing.T) {
	b, err := envBudget("COPIES_P50", "2.0")
	if err != nil || b.value != 2 || b.source != "the feature" || b.override != "" {
		t.Fatalf("without override: %+v %v", b, err)
	}
	t.Setenv("SEGDIFF_BUDGET_COPIES_P50", "1.5")
	b, err = envBudget("COPIES_P50", "2.0")
	if err != nil || b.value != 1.5 || b.source != "SEGDIFF_BUDGET_COPIES_P50" || b.override != "SEGDIFF_BUDGET_COPIES_P50=1.5 (feature: 2.0)" {
		t.Fatalf("with override: %+v %v", b, err)
	}
	t.Setenv("SEGDIFF_BUDGET_COPIES_P50", "lots")
	if _, err := envBudget("COPIES_P50", "2.0"); err == nil {
		t.Fatal("malformed override accepted")
	}
	if _, err := envBudget("NO_SUCH", "2.0"); err == nil {
		t.Fatal("a budget missing from Budgets accepted")
	}
}

func TestTagAtoms(t *testing.T) {
	tests := []struct {
		filter  string
		want    []string
		wantErr bool
	}{
		{filter: "", want: nil},
		{filter: "@embedded && ~@slow", want: []string{"@embedded", "@slow"}},
		{filter: "@kurtosis,@embedded&&~@wip", want: []string{"@kurtosis", "@embedded", "@wip"}},
		{filter: "embedded", want: []string{"@embedded"}},
		{filter: "@embedded and not @slow", wantErr: true},
		{filter: "@embedded && ", wantErr: true},
		{filter: "@embedded &&", wantErr: true},
		{filter: "@embedded,,@kurtosis", wantErr: true},
		{filter: "@", wantErr: true},
		{filter: "~", wantErr: true},
		{filter: "~~@slow", wantErr: true},
		{filter: "@@slow", wantErr: true},
		{filter: "@embedded & @slow", wantErr: true},
		{filter: "(@embedded)", wantErr: true},
	}
	for _, tc := range tests {
		got, err := TagAtoms(tc.filter)
		if (err != nil) != tc.wantErr || !slices.Equal(got, tc.want) {
			t.Errorf("TagAtoms(%q) = %q, %v; want %q (error %v)", tc.filter, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestSettledWarm(t *testing.T) {
	slots := func(m map[uint64]float64) map[uint64]*metrics.Slot {
		return metricstest.Slots(map[string]map[uint64]float64{string(assertions.SeriesCompleted): m})
	}
	builder := assertions.Node{ID: "b", Builder: true, Slots: metricstest.Slots(map[string]map[uint64]float64{
		string(assertions.SeriesReveal): {1: 1, 2: 2, 3: 3, 4: 4}})}
	tests := []struct {
		name      string
		receivers []assertions.Node
		want      []uint64
	}{
		{name: "latest slot in flight", receivers: []assertions.Node{{ID: "r", Slots: slots(map[uint64]float64{2: 2, 3: 3})}}, want: []uint64{2, 3}},
		{name: "latest slot complete everywhere", receivers: []assertions.Node{{ID: "r", Slots: slots(map[uint64]float64{2: 2, 3: 3, 4: 4})}}, want: []uint64{2, 3, 4}},
		{name: "later reveal settles a slot a node missed", receivers: []assertions.Node{{ID: "r", Slots: slots(map[uint64]float64{4: 4})}}, want: []uint64{2, 3, 4}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := settledWarm(assertions.Network{Nodes: append([]assertions.Node{builder}, tc.receivers...)})
			if !slices.Equal(got, tc.want) {
				t.Fatalf("settledWarm = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestConfigsOf(t *testing.T) {
	s := New(Config{Backend: "embedded", Seed: 9})
	tests := []struct {
		text string
		want []devnet.Config
	}{
		{text: "a segmented devnet", want: []devnet.Config{{Mode: devnet.ModeSegmented, Preset: "ci", Seed: 9}}},
		{text: `a whole devnet with preset "study-500"`, want: []devnet.Config{{Mode: devnet.ModeWhole, Preset: "study-500", Seed: 9}}},
		{text: `identical whole and segmented devnets with preset "ci"`, want: []devnet.Config{
			{Mode: devnet.ModeWhole, Preset: "ci", Seed: 9}, {Mode: devnet.ModeSegmented, Preset: "ci", Seed: 9}}},
		{text: `a tier2 devnet under stress "withholder=50%, loss-data=5%"`, want: []devnet.Config{
			{Mode: "tier2", Preset: "ci", Seed: 9, Stress: stress.Set{"withholder": 0.5, "loss-data": 0.05}}}},
		{text: "the devnet has revealed 3 warm payloads", want: nil},
	}
	for _, tc := range tests {
		if got, err := s.configsOf(tc.text); err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("configsOf(%q) = %v, %v; want %v", tc.text, got, err, tc.want)
		}
	}
	if _, err := s.configsOf(`a tier2 devnet under stress "withholders=50%"`); err == nil || !strings.Contains(err.Error(), "did you mean withholder") {
		t.Errorf("a misspelled stress condition: %v", err)
	}
}
