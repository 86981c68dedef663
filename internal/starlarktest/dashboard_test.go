package starlarktest_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/segdiff/segdiff/metrics"
)

// promqlWords are PromQL keywords, aggregations and functions the dashboard
// may use; any other bare identifier outside {…}, […], strings and label
// lists is a metric name.
var promqlWords = []string{
	"sum", "max", "min", "avg", "count", "by", "without", "on", "ignoring", "group_left", "group_right",
	"bool", "and", "or", "unless", "offset", "rate", "irate", "increase", "delta", "histogram_quantile",
	"topk", "bottomk", "quantile", "abs", "clamp_min", "clamp_max", "time", "timestamp", "vector",
	"max_over_time", "min_over_time", "avg_over_time", "last_over_time", "label_replace",
}

// metricNames returns the metric names an expression selects.
func metricNames(expr string) []string {
	var names []string
	labelList := false // inside by(...)/on(...)/… parentheses
	lastWord := ""
	for i := 0; i < len(expr); {
		c := rune(expr[i])
		switch {
		case c == '"' || c == '\'':
			end := strings.IndexRune(expr[i+1:], c)
			if end < 0 {
				return append(names, "<unterminated string>")
			}
			i += end + 2
		case c == '{':
			end := strings.IndexByte(expr[i:], '}')
			if end < 0 {
				return append(names, "<unterminated {>")
			}
			i += end + 1
		case c == '[':
			end := strings.IndexByte(expr[i:], ']')
			if end < 0 {
				return append(names, "<unterminated [>")
			}
			i += end + 1
		case c == '(':
			labelList = slices.Contains([]string{"by", "without", "on", "ignoring", "group_left", "group_right"}, lastWord)
			lastWord = ""
			i++
		case c == ')':
			labelList = false
			lastWord = ""
			i++
		case unicode.IsLetter(c) || c == '_' || c == ':':
			j := i
			for j < len(expr) && (unicode.IsLetter(rune(expr[j])) || unicode.IsDigit(rune(expr[j])) || expr[j] == '_' || expr[j] == ':') {
				j++
			}
			word := expr[i:j]
			if !labelList && !slices.Contains(promqlWords, word) {
				names = append(names, word)
			}
			lastWord = word
			i = j
		default:
			if !unicode.IsSpace(c) {
				lastWord = ""
			}
			i++
		}
	}
	return names
}

// contractName reports whether a selected series is in the metrics contract
// (a histogram also as _bucket, _sum, _count).
func contractName(name string) bool {
	names := metrics.Names()
	if slices.Contains(names, name) {
		return true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok {
			if d, found := metrics.Lookup(base); found && d.Type == metrics.TypeHistogram {
				return true
			}
		}
	}
	return false
}

func TestMetricNames(t *testing.T) {
	tests := []struct {
		expr string
		want []string
	}{
		{`sum by (segdiff_node, slot) (payload_diffusion_received_bytes{kind="data"})`, []string{"payload_diffusion_received_bytes"}},
		{`a - on (slot) group_left () max by (slot) (b)`, []string{"a", "b"}},
		{`histogram_quantile(0.5, sum by (le) (rate(x_bucket[2m])))`, []string{"x_bucket"}},
		{`up`, []string{"up"}},
	}
	for _, tt := range tests {
		if got := metricNames(tt.expr); !slices.Equal(got, tt.want) {
			t.Errorf("metricNames(%q) = %v, want %v", tt.expr, got, tt.want)
		}
	}
	if contractName("up") || !contractName("payload_diffusion_block_install_delay_seconds_bucket") || contractName("payload_diffusion_received_bytes_bucket") {
		t.Error("contractName accepts or rejects the wrong names")
	}
}

// TestDashboardUsesContractMetrics: every series the dashboard queries is in
// the metrics contract, every panel has a query or is text, and the
// datasource is ours.
func TestDashboardUsesContractMetrics(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(packageDir, "static_files", "dashboards", "segdiff.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		UID    string `json:"uid"`
		Panels []struct {
			Title      string `json:"title"`
			Type       string `json:"type"`
			Datasource struct {
				UID string `json:"uid"`
			} `json:"datasource"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	exprs := 0
	for _, p := range dash.Panels {
		if p.Type == "text" {
			continue
		}
		if p.Datasource.UID != "segdiff-prometheus" {
			t.Errorf("panel %q datasource uid %q, want segdiff-prometheus (provisioned by grafana_launcher.star)", p.Title, p.Datasource.UID)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, target := range p.Targets {
			exprs++
			names := metricNames(target.Expr)
			if len(names) == 0 {
				t.Errorf("panel %q: expression selects no metric: %s", p.Title, target.Expr)
			}
			for _, n := range names {
				used[n] = true
				if !contractName(n) {
					t.Errorf("panel %q queries %q, which is not in the metrics contract", p.Title, n)
				}
			}
		}
	}
	if exprs == 0 {
		t.Fatal("dashboard has no queries")
	}
	for _, must := range []string{"payload_diffusion_completed_timestamp_seconds", "payload_diffusion_reveal_timestamp_seconds",
		"payload_diffusion_received_bytes", "payload_diffusion_block_install_delay_seconds_bucket"} {
		if !used[must] {
			t.Errorf("dashboard never queries %s", must)
		}
	}
}
