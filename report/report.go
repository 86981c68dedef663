// Package report writes a suite run's results into reports/<run-id>/ and
// points reports/latest at it: results.json (every verdict, machine
// readable), summary.md (one table per scenario, measured against budget,
// worst nodes with their link class, and the change of each key figure
// since the previous run), and plots drawn with gonum/plot (completion CDF
// per diffusion mode with the completion budget marked; payload copies
// received per node), each as PNG and SVG. junit.xml and cucumber.json in
// the same directory come from godog's own formatters.
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
	"sort"
	"time"

	"github.com/segdiff/segdiff/assertions"
)

// Scenario statuses.
const (
	StatusPassed  = "passed"
	StatusFailed  = "failed"
	StatusSkipped = "skipped"
)

// Distribution kinds plotted and compared.
const (
	KindCompletion = "completion" // seconds from reveal
	KindCopies     = "copies"     // payload copies received
	KindInstall    = "install"    // block install delay, seconds
)

// Run is one suite run.
type Run struct {
	ID       string    `json:"id"`
	Backend  string    `json:"backend"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	// CompletionBudget is the per-node completion budget in seconds marked
	// on the CDF plot (3 when zero).
	CompletionBudget float64         `json:"completion_budget_seconds"`
	Scenarios        []Scenario      `json:"scenarios"`
	Distributions    []*Distribution `json:"distributions,omitempty"`
}

// Scenario is one scenario's outcome.
type Scenario struct {
	Name     string               `json:"name"`
	Tags     []string             `json:"tags,omitempty"`
	Devnets  []string             `json:"devnets,omitempty"` // devnet.Config strings used
	Status   string               `json:"status"`
	Error    string               `json:"error,omitempty"`
	Verdicts []assertions.Verdict `json:"verdicts,omitempty"`
}

// Distribution is one kind of per-node, per-slot measurement from one
// diffusion mode, pooled over the scenarios that read it.
type Distribution struct {
	Kind    string              `json:"kind"`
	Mode    string              `json:"mode"`
	Samples []assertions.Sample `json:"samples"`
}

// AddSamples pools samples of kind and mode into r, keeping one sample per
// node and slot (scenarios sharing a devnet read the same slots).
func (r *Run) AddSamples(kind, mode string, samples []assertions.Sample) {
	var d *Distribution
	for _, have := range r.Distributions {
		if have.Kind == kind && have.Mode == mode {
			d = have
		}
	}
	if d == nil {
		d = &Distribution{Kind: kind, Mode: mode}
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
}

// Write stores run under dir/<run.ID>/ and points dir/latest at it. When
// dir/latest named another run with a results.json, summary.md shows the
// change of each key figure against it.
func Write(dir string, run Run) (Written, error) {
	if run.ID == "" {
		return Written{}, errors.New("write report: run has no id")
	}
	out := filepath.Join(dir, run.ID)
	if err := os.MkdirAll(out, 0o755); err != nil {
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
	add := func(name string, data []byte) error {
		p := filepath.Join(out, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return fmt.Errorf("write report %s: %w", p, err)
		}
		w.Files = append(w.Files, p)
		return nil
	}
	js, err := json.MarshalIndent(resultsFile{Run: run, Figures: run.Figures()}, "", "  ")
	if err != nil {
		return w, fmt.Errorf("write report: encode results: %w", err)
	}
	if err := add("results.json", append(js, '\n')); err != nil {
		return w, err
	}
	plots, err := writePlots(out, run)
	if err != nil {
		return w, err
	}
	w.Files = append(w.Files, plots...)
	if err := add("summary.md", []byte(Summary(run, prev, plots))); err != nil {
		return w, err
	}
	if err := linkLatest(dir, run.ID); err != nil {
		return w, fmt.Errorf("write report: %w", err)
	}
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
	tmp := filepath.Join(dir, ".latest.tmp")
	_ = os.Remove(tmp)
	if err := os.Symlink(id, tmp); err != nil {
		return fmt.Errorf("link latest: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "latest")); err != nil {
		return fmt.Errorf("link latest: %w", err)
	}
	return nil
}

// NewRunID returns a sortable run id for t: 20060102T150405Z.
func NewRunID(t time.Time) string { return t.UTC().Format("20060102T150405Z") }
