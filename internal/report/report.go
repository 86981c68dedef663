// Package report writes a suite run's results into reports/<run-id>/ and,
// when the run executed at least one scenario, points reports/latest at it: results.json (every verdict, machine
// readable), summary.md (a table of every scenario's outcome, then one
// table per executed scenario: measured against budget, worst nodes with
// their link class, and the change of each key figure since the previous
// run), and plots drawn with gonum/plot (completion and payload copies, one
// panel per devnet with the budgets checked on that devnet), each as PNG and
// SVG. junit.xml and cucumber.json in
// the same directory come from godog's own formatters.
//
// Files are assembled in a hidden staging directory (StagingDir) and the
// directory is renamed into place only when complete, so an interrupted run
// leaves no half-written report: Discard removes its staging directory.
//
// A Run is filled by one goroutine at a time (the suite's hooks run
// sequentially); Write reads the previous run through reports/latest before
// moving the link.
package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/segdiff/segdiff/assertions"
	"github.com/segdiff/segdiff/internal/atomicfile"
)

// Scenario statuses.
const (
	StatusPassed  = "passed"
	StatusFailed  = "failed"
	StatusSkipped = "skipped"
)

// Distribution kinds plotted and compared.
const (
	KindCompletion = assertions.KindCompletion // seconds from reveal
	KindCopies     = assertions.KindCopies     // payload copies received
	KindInstall    = assertions.KindInstall    // block install delay, seconds
)

// Run is one suite run.
type Run struct {
	ID       string    `json:"id"`
	Backend  string    `json:"backend"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	// Devnets describes every devnet the run opened, by its config key
	// (devnet.Config.String), for titles and headers.
	Devnets map[string]DevnetInfo `json:"devnets,omitempty"`
	// Budgets are every budget a scenario checked on a devnet, each drawn
	// on its kind's plot in that devnet's panel only.
	Budgets       []BudgetLine    `json:"budgets,omitempty"`
	Scenarios     []Scenario      `json:"scenarios"`
	Distributions []*Distribution `json:"distributions,omitempty"`
}

// DevnetInfo is what a devnet ran: the values its backend chose where the
// config left them to it (a default seed, the preset's node count).
type DevnetInfo struct {
	Mode   string `json:"mode"`
	Seed   int64  `json:"seed,omitempty"`
	Nodes  int    `json:"nodes"`
	Preset string `json:"preset,omitempty"`
	// Stress is the stress configuration ("" for none); Roles counts the
	// nodes holding each role.
	Stress string         `json:"stress,omitempty"`
	Roles  map[string]int `json:"roles,omitempty"`
}

// String reads "segmented, seed 7, 32 nodes, preset ci".
func (d DevnetInfo) String() string {
	s := fmt.Sprintf("%s, %d nodes", d.Mode, d.Nodes)
	if d.Seed != 0 {
		s = fmt.Sprintf("%s, seed %d, %d nodes", d.Mode, d.Seed, d.Nodes)
	}
	if d.Preset != "" {
		s += ", preset " + d.Preset
	}
	if d.Stress != "" {
		s += ", stress " + d.Stress
	}
	if len(d.Roles) > 0 {
		keys := make([]string, 0, len(d.Roles))
		for k := range d.Roles {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var parts []string
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%d %s", d.Roles[k], k))
		}
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	return s
}

// BudgetLine is a budget a scenario checked on one devnet, drawn on the
// plot of its kind in that devnet's panel: e.g. tier3's median completion
// budget (0.7 s) on the completion CDF of the tier3 devnet.
type BudgetLine struct {
	Kind  string  `json:"kind"`
	Label string  `json:"label"` // the line's name on the plot: "median"
	Value float64 `json:"value"`
	// Devnet is the config key (devnet.Config.String) of the devnet the
	// budget was checked on; Scenario and Check name the check.
	Devnet   string `json:"devnet"`
	Scenario string `json:"scenario"`
	Check    string `json:"check"`
}

// AddBudget records b. Budgets are kept per devnet and scenario, so that
// each mode's (and stress condition's) budgets stay its own; only an
// identical record is dropped.
func (r *Run) AddBudget(b BudgetLine) {
	if !slices.Contains(r.Budgets, b) {
		r.Budgets = append(r.Budgets, b)
	}
}

// devnetLabel names the devnet of config key key briefly, by what tells
// one series from another in a run: "tier2 withholder=0.5 (ci)". A key
// the run did not describe (its devnet failed to open) is returned as is.
func (r Run) devnetLabel(key string) string {
	d, ok := r.Devnets[key]
	if !ok {
		return key
	}
	s := d.Mode
	if d.Stress != "" {
		s += " " + d.Stress
	}
	if d.Preset != "" {
		s += " (" + d.Preset + ")"
	}
	return s
}

// Executed counts the scenarios that ran (passed or failed, not skipped).
func (r Run) Executed() int {
	n := 0
	for _, sc := range r.Scenarios {
		if sc.Status == StatusPassed || sc.Status == StatusFailed {
			n++
		}
	}
	return n
}

// Scenario is one scenario's outcome.
type Scenario struct {
	Name     string               `json:"name"`
	Tags     []string             `json:"tags,omitempty"`
	Devnets  []string             `json:"devnets,omitempty"` // devnet.Config strings used
	Status   string               `json:"status"`
	Error    string               `json:"error,omitempty"`
	Verdicts []assertions.Verdict `json:"verdicts,omitempty"`
	// Overrides lists the budgets the environment replaced, with the
	// feature's value: "SEGDIFF_BUDGET_COMPLETION_P50=500ms (feature: 1750ms)".
	Overrides []string `json:"overrides,omitempty"`
}

// Distribution is one kind of per-node, per-slot measurement from one
// devnet, pooled over the scenarios that read it.
type Distribution struct {
	Kind string `json:"kind"`
	// Measure says what the samples are, with the definition of copies
	// (assertions.Measure): "payload copies over the slot".
	Measure string `json:"measure"`
	// Devnet is the devnet's config key (devnet.Config.String); Mode is
	// the diffusion mode it ran.
	Devnet  string              `json:"devnet"`
	Mode    string              `json:"mode"`
	Samples []assertions.Sample `json:"samples"`
}

// AddSamples pools samples of kind from the devnet of config key devnet,
// running mode, into r, keeping one sample per node and slot (scenarios
// sharing a devnet read the same slots). Devnets of one mode under
// different stress or presets stay apart.
func (r *Run) AddSamples(kind, devnet, mode string, samples []assertions.Sample) {
	var d *Distribution
	for _, have := range r.Distributions {
		if have.Kind == kind && have.Devnet == devnet {
			d = have
		}
	}
	if d == nil {
		d = &Distribution{Kind: kind, Measure: assertions.Measure(kind), Devnet: devnet, Mode: mode}
		r.Distributions = append(r.Distributions, d)
	}
	seen := map[string]bool{}
	for _, s := range d.Samples {
		seen[fmt.Sprintf("%s/%d", s.Node, s.Slot)] = true
	}
	for _, s := range samples {
		k := fmt.Sprintf("%s/%d", s.Node, s.Slot)
		if !seen[k] {
			seen[k] = true
			d.Samples = append(d.Samples, s)
		}
	}
	sort.Slice(d.Samples, func(i, j int) bool {
		if d.Samples[i].Node != d.Samples[j].Node {
			return d.Samples[i].Node < d.Samples[j].Node
		}
		return d.Samples[i].Slot < d.Samples[j].Slot
	})
}

// Figures returns the run's key figures: each verdict's measured value keyed
// "<scenario> / <check>".
func (r Run) Figures() map[string]float64 {
	out := map[string]float64{}
	for _, sc := range r.Scenarios {
		for _, v := range sc.Verdicts {
			if v.Reason == "" {
				out[figureKey(sc.Name, v.Check)] = v.Measured
			}
		}
	}
	return out
}

func figureKey(scenario, check string) string { return scenario + " / " + check }

// Written lists the files Write produced.
type Written struct {
	Dir      string
	Files    []string
	Previous string // run id compared against, "" when none
	// Latest is true when dir/latest now points at Dir (the run executed
	// at least one scenario).
	Latest bool
}

// StagingDir is where run id's files are assembled under dir before Write
// renames it to dir/<id>; godog's junit and cucumber formatters write there
// too. It is hidden so that a listing of reports shows finished runs only.
func StagingDir(dir, id string) string { return filepath.Join(dir, "."+id+".partial") }

// Discard removes run id's staging directory (an interrupted run).
func Discard(dir, id string) error {
	if err := os.RemoveAll(StagingDir(dir, id)); err != nil {
		return fmt.Errorf("discard report %s: %w", id, err)
	}
	return nil
}

// Write stores run under dir/<run.ID>/: it writes results.json, the plots
// and summary.md into StagingDir (beside anything godog's formatters put
// there), then renames the staging directory into place. dir/latest moves
// to the run only when it executed at least one scenario, so an empty or
// mistyped run never hides the last real one. When dir/latest named
// another run with a results.json, summary.md shows the change of each key
// figure against it.
func Write(dir string, run Run) (Written, error) {
	if run.ID == "" {
		return Written{}, errors.New("write report: run has no id")
	}
	stage, out := StagingDir(dir, run.ID), filepath.Join(dir, run.ID)
	if _, err := os.Stat(out); err == nil {
		return Written{}, fmt.Errorf("write report: %s already exists (run ids must be unique)", out)
	}
	if err := os.MkdirAll(stage, 0o755); err != nil {
		return Written{}, fmt.Errorf("write report: %w", err)
	}
	prev, err := previous(dir, run.ID)
	if err != nil {
		return Written{}, fmt.Errorf("write report: %w", err)
	}
	w := Written{Dir: out}
	if prev != nil {
		w.Previous = prev.ID
	}
	var staged []string
	add := func(name string, data []byte) error {
		p := filepath.Join(stage, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return fmt.Errorf("write report %s: %w", p, err)
		}
		staged = append(staged, p)
		return nil
	}
	js, err := json.MarshalIndent(resultsFile{Run: run, Figures: run.Figures()}, "", "  ")
	if err != nil {
		return w, fmt.Errorf("write report: encode results: %w", err)
	}
	if err := add("results.json", append(js, '\n')); err != nil {
		return w, err
	}
	plots, err := writePlots(stage, run)
	if err != nil {
		return w, err
	}
	staged = append(staged, plots...)
	if err := add("summary.md", []byte(Summary(run, prev, plots))); err != nil {
		return w, err
	}
	if err := os.Rename(stage, out); err != nil {
		return w, fmt.Errorf("write report: publish %s: %w", out, err)
	}
	for _, p := range staged {
		w.Files = append(w.Files, filepath.Join(out, filepath.Base(p)))
	}
	if run.Executed() == 0 {
		return w, nil
	}
	if err := linkLatest(dir, run.ID); err != nil {
		return w, fmt.Errorf("write report: %w", err)
	}
	w.Latest = true
	return w, nil
}

type resultsFile struct {
	Run
	Figures map[string]float64 `json:"figures"`
}

// previous reads dir/latest/results.json unless latest already names id.
func previous(dir, id string) (*Run, error) {
	target, err := os.Readlink(filepath.Join(dir, "latest"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read latest link: %w", err)
	}
	if filepath.Base(target) == id {
		return nil, nil
	}
	data, err := os.ReadFile(filepath.Join(dir, "latest", "results.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // previous run wrote no results (interrupted)
	}
	if err != nil {
		return nil, fmt.Errorf("read previous results: %w", err)
	}
	var prev resultsFile
	if err := json.Unmarshal(data, &prev); err != nil {
		return nil, fmt.Errorf("decode previous results %s: %w", filepath.Join(dir, "latest", "results.json"), err)
	}
	return &prev.Run, nil
}

// linkLatest points dir/latest at id atomically (a temporary link renamed
// over the old one).
func linkLatest(dir, id string) error {
	if err := atomicfile.Symlink(id, filepath.Join(dir, "latest")); err != nil {
		return fmt.Errorf("link latest: %w", err)
	}
	return nil
}

// NewRunID returns a sortable run id for t: 20060102T150405Z.
func NewRunID(t time.Time) string { return t.UTC().Format("20060102T150405Z") }
