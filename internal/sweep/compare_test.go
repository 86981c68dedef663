package sweep

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

const threeSeeds = `name: gate
fixed: {nodes: 16, degree: 14, payloads: 2%s}
axes:
  mode: [segmented]
  seed: [7, 8, 9]
`

func runGrid(t *testing.T, grid string) string {
	t.Helper()
	r := fakeRunner(t)
	if _, err := r.Run(context.Background(), mustPlan(t, grid)); err != nil {
		t.Fatal(err)
	}
	return r.Out
}

func TestCompare(t *testing.T) {
	base := runGrid(t, strings.Replace(threeSeeds, "%s", "", 1))
	same := runGrid(t, strings.Replace(threeSeeds, "%s", "", 1))
	slow := runGrid(t, strings.Replace(threeSeeds, "%s", ", node-class: custom, custom-up: 20", 1))
	fast := runGrid(t, strings.Replace(threeSeeds, "%s", ", node-class: custom, custom-up: 100", 1))
	opts := DefaultCompareOptions()
	tests := []struct {
		name        string
		base, next  string
		regressions int
		differ      string
	}{
		{"same grid twice", base, same, 0, ""},
		{"a lower uplink", base, slow, 3, "node_class: home → custom"}, // p50, p99 and the share within 3 s; copies unchanged
		{"a higher uplink", base, fast, 0, "custom_up_mbps"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmp, err := Compare(context.Background(), tt.base, tt.next, opts)
			if err != nil {
				t.Fatal(err)
			}
			var md strings.Builder
			if err := cmp.WriteMarkdown(&md); err != nil {
				t.Fatal(err)
			}
			t.Log("\n" + md.String())
			if want := "α 0.05 · warm slots · tolerance p50 10 %, p99 10 %, within 10 points, copies 10 %"; !strings.Contains(md.String(), want) {
				t.Errorf("the comparison does not state its gate %q", want)
			}
			if got := cmp.Regressions(); got != tt.regressions {
				t.Errorf("%d regressions, want %d", got, tt.regressions)
			}
			if !strings.Contains(strings.Join(cmp.Differ, ";"), tt.differ) {
				t.Errorf("differ = %v, want %q", cmp.Differ, tt.differ)
			}
		})
	}
}

func TestCompareMetric(t *testing.T) {
	sp := func(xs ...float64) Spread { return spreadOf(xs) }
	tests := []struct {
		name       string
		m          Metric
		base, next Spread
		regressed  bool
		verdict    string
	}{
		{"3+3 separated, 20 % slower", MetricP50, sp(1, 1.1, 1.2), sp(1.3, 1.35, 1.4), true, "p 0.05"},
		{"3+3 overlapping", MetricP50, sp(1, 1.5, 1.2), sp(1.3, 1.35, 1.6), false, "not significant"},
		{"within tolerance", MetricP50, sp(1, 1.01, 1.02), sp(1.05, 1.06, 1.07), false, "within tolerance"},
		{"2+2 separated", MetricP99, sp(1, 1.1), sp(2, 2.1), true, "every new seed worse"},
		{"2+2 overlapping", MetricP99, sp(1, 2.2), sp(2, 2.1), false, "cannot reach"},
		{"share falls", MetricWithin, sp(0.9, 0.95, 1), sp(0.5, 0.6, 0.7), true, "REGRESSED"},
		{"never is worse", MetricP99, sp(1, 1.1, 1.2), sp(math.Inf(1), math.Inf(1), math.Inf(1)), true, "REGRESSED"},
		{"never both", MetricP99, sp(math.Inf(1), math.Inf(1), math.Inf(1)), sp(math.Inf(1), math.Inf(1), math.Inf(1)), false, "within tolerance"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := compareMetric(tt.m, tt.base, tt.next, 0.1, 0.05)
			if err != nil {
				t.Fatal(err)
			}
			if d.Regressed != tt.regressed || !strings.Contains(d.Verdict, tt.verdict) {
				t.Errorf("regressed %v (%s), want %v (%q)", d.Regressed, d.Verdict, tt.regressed, tt.verdict)
			}
		})
	}
}

func TestToleranceText(t *testing.T) {
	o := DefaultCompareOptions()
	o.Tolerance = map[Metric]float64{MetricP99: 0.05, MetricWithin: 0.02}
	if got, want := o.ToleranceText(), "p50 not gated, p99 5 %, within 2 points, copies not gated, copies-over-slot not gated"; got != want {
		t.Errorf("ToleranceText = %q, want %q", got, want)
	}
}

// never (+Inf) travels through JSON as null and back.
func TestNumJSON(t *testing.T) {
	s := spreadOf([]float64{1, math.Inf(1)})
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"mean":null`) || !strings.Contains(string(b), `"never":1`) {
		t.Errorf("json = %s", b)
	}
	var back Spread
	if err := json.Unmarshal(b, &back); err != nil || !math.IsInf(float64(back.Max), 1) || float64(back.Min) != 1 {
		t.Errorf("round trip = %+v, %v", back, err)
	}
	if got := formatMetric(MetricP99, s); got != "never (1.000–never)" {
		t.Errorf("entry = %q", got)
	}
}
