package sweep

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/segdiff/segdiff/internal/devnet/embedded"
	"github.com/segdiff/segdiff/internal/stats"
	"github.com/segdiff/segdiff/internal/stress"
)

// Num is a statistic; +Inf ("never": a quantile that landed on a node
// that never completed) is null in JSON.
type Num float64

// MarshalJSON writes +Inf and NaN as null.
func (n Num) MarshalJSON() ([]byte, error) {
	if math.IsInf(float64(n), 0) || math.IsNaN(float64(n)) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(n))
}

// UnmarshalJSON reads null as +Inf.
func (n *Num) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = Num(math.Inf(1))
		return nil
	}
	var f float64
	err := json.Unmarshal(b, &f)
	*n = Num(f)
	return err
}

// Spread is one statistic over a configuration's seeds: the mean of the
// per-seed values, their range, and each seed's value in seed order.
// A mean or maximum over a censored seed is +Inf.
type Spread struct {
	Mean    Num   `json:"mean"`
	Min     Num   `json:"min"`
	Max     Num   `json:"max"`
	PerSeed []Num `json:"per_seed"`
	// Never counts the seeds whose statistic is censored.
	Never int `json:"never,omitempty"`
}

func spreadOf(xs []float64) Spread {
	s := Spread{PerSeed: make([]Num, len(xs))}
	for i, x := range xs {
		s.PerSeed[i] = Num(x)
		if stats.Censored(x) {
			s.Never++
		}
	}
	lo, hi := stats.Range(xs)
	s.Mean, s.Min, s.Max = Num(stats.Mean(xs)), Num(lo), Num(hi)
	return s
}

// Values returns the per-seed values as float64 (+Inf: never).
func (s Spread) Values() []float64 {
	out := make([]float64, len(s.PerSeed))
	for i, v := range s.PerSeed {
		out[i] = float64(v)
	}
	return out
}

// PhaseStats are a configuration's statistics over its seeds for the warm
// slots or for the cold one. Each seed's figure is its own summary's
// (package stats: nearest-rank over receivers × slots); the spread is over
// seeds.
type PhaseStats struct {
	// Slots is the payload slots each seed's figures cover.
	Slots int `json:"slots"`
	// P50 is the mean of per-seed medians, P99 of per-seed 99th
	// percentiles, in seconds from the reveal.
	P50 Spread `json:"p50_s"`
	P99 Spread `json:"p99_s"`
	// Within is the share of receivers complete within the window.
	Within Spread `json:"within_window"`
	// Copies is copies received per receiver and slot by network
	// completion, mean (the design's accounting; NaN where a seed's slots
	// had a node that never completed), and CopiesOverSlot the median of
	// copies over the slot (what the features' copies budgets bound and
	// what clients' metrics give).
	Copies         Spread `json:"copies_by_network_completion_mean"`
	CopiesOverSlot Spread `json:"copies_over_slot_median"`
}

// Metric names a statistic of PhaseStats.
type Metric string

// The metrics summarised and compared.
const (
	MetricP50    Metric = "p50"
	MetricP99    Metric = "p99"
	MetricWithin Metric = "within"
	MetricCopies Metric = "copies"
	// MetricCopiesOverSlot is the median of copies over the slot.
	MetricCopiesOverSlot Metric = "copies-over-slot"
)

// Metrics lists every metric in table order.
var Metrics = []Metric{MetricP50, MetricP99, MetricWithin, MetricCopies, MetricCopiesOverSlot}

// Get returns the metric's spread.
func (p PhaseStats) Get(m Metric) Spread {
	switch m {
	case MetricP50:
		return p.P50
	case MetricP99:
		return p.P99
	case MetricWithin:
		return p.Within
	case MetricCopiesOverSlot:
		return p.CopiesOverSlot
	}
	return p.Copies
}

// HigherIsWorse tells which way a metric regresses.
func (m Metric) HigherIsWorse() bool { return m != MetricWithin }

// ConfigSummary is one configuration (a cell without its seed) over its
// seeds.
type ConfigSummary struct {
	// Configuration is "mode=whole network=home"; Row and Column place it
	// in the tables (Column is the column axis's label, Row the others').
	Configuration string  `json:"configuration"`
	Coords        []Coord `json:"coords"`
	Row           string  `json:"row"`
	Column        string  `json:"column"`
	Nodes         int     `json:"nodes"`
	// Mode is the configuration's diffusion mode; Adversary its share of
	// adversarial nodes by role ("withholder": 0.5), empty on an honest
	// network; Faulted is set when it has faults besides roles (loss,
	// omitted parts, spread uplinks) or a payload size other than the
	// preset's, which the adversary plot leaves out.
	Mode      string             `json:"mode"`
	Adversary map[string]float64 `json:"adversary,omitempty"`
	Faulted   bool               `json:"faulted,omitempty"`
	// ModelCaveat is set when the configuration runs the flows network
	// model outside where it was validated (embedded.Config.ModelCaveat).
	ModelCaveat string     `json:"model_caveat,omitempty"`
	Seeds       []int64    `json:"seeds"`
	Hashes      []string   `json:"hashes"`
	Warm        PhaseStats `json:"warm"`
	Cold        PhaseStats `json:"cold"`
	// WallSeconds is each seed's cell wall time; PeakRSSBytes the largest
	// cell peak.
	WallSeconds  Spread `json:"wall_seconds"`
	PeakRSSBytes int64  `json:"peak_rss_bytes"`

	// completion pools every seed's receivers × slots, for the CDFs.
	warmCompletion, coldCompletion []float64
}

// Summary is sweep.json: every configuration of a sweep over its seeds.
type Summary struct {
	Sweep       string `json:"sweep"`
	GridFile    string `json:"grid_file"`
	Description string `json:"description,omitempty"`
	// Columns is the axis laid out as table columns ("" when none), and
	// ColumnLabels / RowLabels their order.
	Columns      string   `json:"columns,omitempty"`
	ColumnLabels []string `json:"column_labels"`
	RowLabels    []string `json:"row_labels"`
	// RowAxes name the parts of a row label.
	RowAxes []string `json:"row_axes"`
	// Varied lists the axes (seed aside) with more than one value.
	Varied []string `json:"varied"`
	// Window is the completion budget Within counts against.
	Window string `json:"window"`
	// Cells counts the cells summarised, Planned the plan's; Missing lists
	// the plan indices not (yet) run.
	Cells   int     `json:"cells"`
	Planned int     `json:"planned"`
	Missing []int   `json:"missing,omitempty"`
	Seeds   []int64 `json:"seeds"`
	// Configurations are in plan order.
	Configurations []*ConfigSummary `json:"configurations"`
	// CellWallSeconds sums every cell's wall time (the machine time of the
	// sweep on one job); PeakRSSBytes is the largest cell peak.
	CellWallSeconds float64 `json:"cell_wall_seconds"`
	PeakRSSBytes    int64   `json:"peak_rss_bytes"`
}

// Summarize condenses finished cells of one sweep by configuration.
func Summarize(cells []*CellResult) (*Summary, error) {
	if len(cells) == 0 {
		return nil, fmt.Errorf("summarize sweep: no finished cells")
	}
	first := cells[0].Record
	s := &Summary{Sweep: first.Sweep, GridFile: first.GridFile, Columns: first.Columns, Planned: first.Cells, Cells: len(cells),
		Window: first.Config.Window.String()}
	byConfig := map[string]*ConfigSummary{}
	groups := map[string][]*CellResult{}
	have := map[int]bool{}
	values := map[string][]string{} // axis → distinct labels
	for _, c := range cells {
		if c.Sweep != first.Sweep || c.Cells != first.Cells || c.Columns != first.Columns {
			return nil, fmt.Errorf("summarize sweep: cells of different sweeps: %q (%d cells) and %q (%d cells)", first.Sweep, first.Cells, c.Sweep, c.Cells)
		}
		have[c.Index] = true
		if !slices.Contains(s.Seeds, c.Seed()) {
			s.Seeds = append(s.Seeds, c.Seed())
		}
		for _, co := range c.Coords {
			if !slices.Contains(values[co.Axis], co.Label) {
				values[co.Axis] = append(values[co.Axis], co.Label)
			}
		}
		key := c.Configuration()
		if _, ok := byConfig[key]; !ok {
			cs := &ConfigSummary{Configuration: key, Coords: withoutSeed(c.Coords), Nodes: c.Config.Nodes, Column: "all",
				Mode: string(c.Config.Mode), Adversary: adversaryOf(c.Config), Faulted: faulted(c.Config),
				ModelCaveat: c.Config.ModelCaveat()}
			var row []string
			for _, co := range cs.Coords {
				if co.Axis == s.Columns {
					cs.Column = co.Label
					continue
				}
				row = append(row, co.Label)
			}
			cs.Row = strings.Join(row, " · ")
			byConfig[key] = cs
			s.Configurations = append(s.Configurations, cs)
			if !slices.Contains(s.RowLabels, cs.Row) {
				s.RowLabels = append(s.RowLabels, cs.Row)
			}
			if !slices.Contains(s.ColumnLabels, cs.Column) {
				s.ColumnLabels = append(s.ColumnLabels, cs.Column)
			}
		}
		groups[key] = append(groups[key], c)
	}
	for i := 0; i < s.Planned; i++ {
		if !have[i] {
			s.Missing = append(s.Missing, i)
		}
	}
	slices.Sort(s.Seeds)
	for _, co := range cells[0].Coords {
		if co.Axis == SeedKey {
			continue
		}
		if co.Axis != s.Columns {
			s.RowAxes = append(s.RowAxes, co.Axis)
		}
		if len(values[co.Axis]) > 1 {
			s.Varied = append(s.Varied, co.Axis)
		}
	}
	for _, cs := range s.Configurations {
		g := groups[cs.Configuration]
		slices.SortFunc(g, func(a, b *CellResult) int { return int(a.Seed() - b.Seed()) })
		fill(cs, g)
		s.CellWallSeconds += sumOf(cs.WallSeconds.Values())
		s.PeakRSSBytes = max(s.PeakRSSBytes, cs.PeakRSSBytes)
	}
	return s, nil
}

// fill computes a configuration's statistics from its cells, in seed order.
func fill(cs *ConfigSummary, g []*CellResult) {
	var wall []float64
	warm, cold := make([]embedded.Summary, len(g)), make([]embedded.Summary, len(g))
	for i, c := range g {
		cs.Seeds = append(cs.Seeds, c.Seed())
		cs.Hashes = append(cs.Hashes, c.Hash)
		warm[i], cold[i] = c.Warm, c.Cold
		wall = append(wall, c.WallSeconds)
		cs.PeakRSSBytes = max(cs.PeakRSSBytes, c.PeakRSSBytes)
		cs.warmCompletion = append(cs.warmCompletion, c.WarmCompletion...)
		cs.coldCompletion = append(cs.coldCompletion, c.ColdCompletion...)
	}
	cs.Warm, cs.Cold = phaseOf(warm), phaseOf(cold)
	cs.WallSeconds = spreadOf(wall)
}

// phaseOf takes each statistic per seed from its summary.
func phaseOf(sums []embedded.Summary) PhaseStats {
	var p50, p99, within, copies, overSlot []float64
	p := PhaseStats{}
	for _, s := range sums {
		p.Slots = s.Slots
		p50 = append(p50, seconds(s.P50))
		p99 = append(p99, seconds(s.P99))
		within = append(within, s.Within)
		copies = append(copies, float64(s.ByNetworkCompletion.Mean))
		overSlot = append(overSlot, float64(s.OverSlot.Median))
	}
	p.P50, p.P99, p.Within = spreadOf(p50), spreadOf(p99), spreadOf(within)
	p.Copies, p.CopiesOverSlot = spreadOf(copies), spreadOf(overSlot)
	return p
}

// seconds converts a summary quantile (-1: censored) to seconds (+Inf).
func seconds[D ~int64](d D) float64 {
	if d < 0 {
		return stats.NeverCompleted
	}
	return float64(d) / 1e9
}

func sumOf(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s
}

// Config returns the configuration at row and column, or nil.
func (s *Summary) Config(row, column string) *ConfigSummary {
	for _, c := range s.Configurations {
		if c.Row == row && c.Column == column {
			return c
		}
	}
	return nil
}

// adversaryOf returns a configuration's adversarial shares by role.
func adversaryOf(c embedded.Config) map[string]float64 {
	out := map[string]float64{}
	for name, share := range c.Stress {
		if cond, ok := stress.Lookup(name); ok && cond.Role && share > 0 {
			out[name] = share
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// faulted reports stress conditions other than roles, or a payload size
// other than the presets' 1 MiB.
func faulted(c embedded.Config) bool {
	for name, v := range c.Stress {
		if cond, ok := stress.Lookup(name); v > 0 && (!ok || !cond.Role) {
			return true
		}
	}
	return c.PayloadSize != embedded.DefaultConfig().PayloadSize
}
