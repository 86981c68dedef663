package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/cucumber/godog"

	"github.com/segdiff/segdiff/internal/atomicfile"
	"github.com/segdiff/segdiff/internal/devnet/embedded"
	"github.com/segdiff/segdiff/internal/suggest"
	"github.com/segdiff/segdiff/internal/sweep"
	"github.com/segdiff/segdiff/steps"
)

func init() {
	register("sweep", command{summary: "run a grid of embedded simulations (modes × networks × sizes × seeds), summarise, plan/merge for clusters, compare", run: runSweep})
}

const sweepUsage = `usage:
  segdiff sweep [--jobs N] [--memory-budget SIZE] [--cell-memory-limit SIZE] --out DIR GRID.yaml
                                                                        run every cell not yet finished in DIR, then summarise
  segdiff sweep plan GRID.yaml                                          print the cells as JSON for a GitHub Actions matrix
  segdiff sweep cell GRID.yaml --index I --out DIR                      run one cell (I defaults to $JOB_COMPLETION_INDEX)
  segdiff sweep merge [--grid GRID.yaml] --out DIR DIR...              merge result folders and summarise (as GRID's cells)
  segdiff sweep compare [--tolerance T] [--alpha A] [--cold] BASE NEW   per-configuration deltas; exit 1 on a regression
  segdiff sweep budgets [--features DIR] [--tags T] DIR...             the features' budgets held against the cells of their devnets
                                                                        (each seed's value, the worst, the budget the cells suggest);
                                                                        exit 1 when a budget fails on a cell
`

// sweepVerbs are sweep's subcommands; anything else is a grid file.
var sweepVerbs = []string{"plan", "cell", "merge", "compare", "budgets"}

func runSweep(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "plan":
			return sweepPlan(args[1:], stdout, stderr)
		case "cell":
			return sweepCell(ctx, args[1:], stdout, stderr)
		case "merge":
			return sweepMerge(ctx, args[1:], stdout, stderr)
		case "compare":
			return sweepCompare(ctx, args[1:], stdout, stderr)
		case "budgets":
			return sweepBudgets(ctx, args[1:], stdout, stderr)
		}
	}
	fs := newFlagSet("sweep")
	jobs := fs.Int("jobs", 1, "cells run at once (each cell is one single-threaded simulation process)")
	budget := fs.String("memory-budget", "", "memory the running cells may take together, e.g. 20GiB (default: the machine's available memory; 0: no limit)")
	cellLimit := fs.String("cell-memory-limit", "", cellLimitUsage)
	out := fs.String("out", "", "output directory: one folder per cell, sweep.md, sweep.json and the plots (required)")
	pos, code, ok := parseCommand(stderr, "sweep", sweepUsage+"\nflags:\n", fs, args)
	if !ok {
		return code
	}
	// A typo'd subcommand first (the flags were meant for it), then the
	// values of the flags given, then the grid, then what is missing: a bad
	// value is named whatever else is wrong (sweep --memory-budget lots
	// names the size).
	if len(pos) > 0 {
		if _, err := os.Stat(pos[0]); err != nil {
			if _, ok := suggest.Nearest(pos[0], sweepVerbs); ok {
				return unknownSubcommand(stderr, "sweep", pos[0], sweepVerbs)
			}
		}
	}
	if *jobs < 1 {
		return usageErrorf(stderr, "sweep", "--jobs %d: want 1 or more", *jobs)
	}
	limit, perCell, err := memoryFlags(*budget, *cellLimit)
	if err != nil {
		return usageError(stderr, "sweep", err)
	}
	if len(pos) == 0 {
		return usageErrorf(stderr, "sweep", "no grid file given (segdiff sweep [flags] --out DIR GRID.yaml, or one of %s)", strings.Join(sweepVerbs, ", "))
	}
	if _, err := os.Stat(pos[0]); err != nil {
		return usageErrorf(stderr, "sweep", "%q is neither a subcommand (%s) nor a grid file: %v", pos[0], strings.Join(sweepVerbs, ", "), pathCause(err))
	}
	if len(pos) > 1 {
		return usageErrorf(stderr, "sweep", "%d grid files given (%s); a sweep runs one grid", len(pos), strings.Join(pos, ", "))
	}
	if *out == "" {
		return usageErrorf(stderr, "sweep", "--out DIR is required: the folder for the cells and the summary")
	}
	plan, code := loadPlan(pos[0], sweep.Memory{Budget: limit, CellLimit: perCell}, stderr)
	if plan == nil {
		return code
	}
	r, err := newRunner(*out, *jobs, limit, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "segdiff sweep: %v\n", err)
		return 1
	}
	outcome, runErr := r.Run(ctx, plan)
	if errors.Is(runErr, sweep.ErrInterrupted) {
		fmt.Fprintf(stderr, "segdiff sweep: %v\n", runErr)
		return 130
	}
	fmt.Fprintf(stderr, "sweep %s: %d cells run, %d finished before, %d failed; %.0f s wall; peak memory of the cells running together %s (sampled each second)\n",
		plan.Grid.Name, outcome.Ran, outcome.Skipped, len(outcome.Failed), outcome.Wall.Seconds(), embedded.FormatBytes(outcome.PeakSampledRSS))
	if code := summarise(ctx, *out, plan, stdout, stderr); code != 0 {
		return code
	}
	if runErr != nil {
		fmt.Fprintf(stderr, "segdiff sweep: %v\n", runErr)
		return 1
	}
	return 0
}

const cellLimitUsage = "GOMEMLIMIT for each cell, e.g. 8GiB: the cell's runtime collects harder rather than grow past it, and the sweep plans the cell at the limit plus a tenth; the cells run with GOGC=off unless GOGC is set, so the collector waits for the limit (default: $GOMEMLIMIT when set; 0: none)"

// cellMemoryLimit reads --cell-memory-limit, or GOMEMLIMIT (which the
// cells inherit) when the flag is not given.
func cellMemoryLimit(s string) (int64, error) {
	name := "--cell-memory-limit"
	if s == "" {
		s, name = os.Getenv("GOMEMLIMIT"), "GOMEMLIMIT"
		if s == "" || s == "off" {
			return 0, nil
		}
	}
	n, err := parseBytes(s)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	return n, nil
}

// memoryFlags reads --memory-budget and --cell-memory-limit (sweep's and
// sweep cell's).
func memoryFlags(budget, cellLimit string) (limit, perCell int64, err error) {
	if limit, _, err = memoryLimit(budget, "--memory-budget"); err != nil {
		return 0, 0, err
	}
	if perCell, err = cellMemoryLimit(cellLimit); err != nil {
		return 0, 0, err
	}
	return limit, perCell, nil
}

// loadPlan reads and checks a grid; on a bad grid it reports every problem
// and returns nil with exit code 2.
func loadPlan(path string, mem sweep.Memory, stderr io.Writer) (*sweep.Plan, int) {
	b, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(stderr, "segdiff sweep: read grid: %v\n", err)
		return nil, 2
	}
	g, err := sweep.Decode(path, b)
	var p *sweep.Plan
	if err == nil {
		p, err = sweep.NewPlan(g, mem)
	}
	if err != nil {
		fmt.Fprintf(stderr, "segdiff sweep: bad grid, nothing was run:\n%v\n", err)
		return nil, 2
	}
	return p, 0
}

func newRunner(out string, jobs int, budget int64, stderr io.Writer) (*sweep.Runner, error) {
	bin := os.Getenv(embedded.BinaryEnv)
	if bin == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("find segdiff binary (set %s): %w", embedded.BinaryEnv, err)
		}
		bin = exe
	}
	host, _ := os.Hostname()
	return &sweep.Runner{Binary: bin, Jobs: jobs, Budget: budget, Out: out, Progress: stderr, Host: host}, nil
}

// summarise writes the summary of dir and prints it.
func summarise(ctx context.Context, dir string, plan *sweep.Plan, stdout, stderr io.Writer) int {
	s, files, err := sweep.Write(ctx, dir, plan)
	if err != nil {
		fmt.Fprintf(stderr, "segdiff sweep: %v\n", err)
		return 1
	}
	if err := s.WriteMarkdown(stdout); err != nil {
		fmt.Fprintf(stderr, "segdiff sweep: %v\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "wrote %s\n", strings.Join(files, ", "))
	return 0
}

// planEntry is one GitHub Actions matrix entry.
type planEntry struct {
	Index int    `json:"index"`
	Cell  string `json:"cell"`
	Hash  string `json:"hash"`
}

func sweepPlan(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("sweep plan")
	pos, code, ok := parseCommand(stderr, "sweep plan", sweepUsage+"\nflags:\n", fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return usageErrorf(stderr, "sweep plan", "want one grid file, got %d%s", len(pos), listed(pos))
	}
	// No memory budget here: the plan runs on other machines.
	plan, code := loadPlan(pos[0], sweep.Memory{}, stderr)
	if plan == nil {
		return code
	}
	m := struct {
		Include []planEntry `json:"include"`
	}{}
	for _, c := range plan.Cells {
		m.Include = append(m.Include, planEntry{Index: c.Index, Cell: c.String(), Hash: c.Hash})
	}
	b, err := json.Marshal(m)
	if err != nil {
		fmt.Fprintf(stderr, "segdiff sweep plan: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, string(b))
	return 0
}

func sweepCell(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("sweep cell")
	index := fs.Int("index", -1, "the cell's plan index (default: $JOB_COMPLETION_INDEX, as a Kubernetes Indexed Job sets it)")
	out := fs.String("out", "", "output directory (required); the cell's folder goes under DIR/cells/")
	budget := fs.String("memory-budget", "", "refuse the cell if its estimate exceeds this (default: the machine's available memory; 0: no check)")
	cellLimit := fs.String("cell-memory-limit", "", cellLimitUsage)
	pos, code, ok := parseCommand(stderr, "sweep cell", sweepUsage+"\nflags:\n", fs, args)
	if !ok {
		return code
	}
	// The values of the flags given first, then the grid, then what is
	// missing (as sweep's).
	limit, perCell, err := memoryFlags(*budget, *cellLimit)
	if err != nil {
		return usageError(stderr, "sweep cell", err)
	}
	if *index < 0 {
		env := os.Getenv("JOB_COMPLETION_INDEX")
		i, err := strconv.Atoi(env)
		if err != nil || i < 0 {
			return usageErrorf(stderr, "sweep cell", "no --index and no JOB_COMPLETION_INDEX (got %q)", env)
		}
		*index = i
	}
	if len(pos) != 1 {
		return usageErrorf(stderr, "sweep cell", "want one grid file, got %d%s", len(pos), listed(pos))
	}
	if *out == "" {
		return usageErrorf(stderr, "sweep cell", "--out DIR is required: the cell's folder goes under DIR/cells/")
	}
	// The budget is checked for the one cell this machine runs, not the
	// whole grid: other cells run elsewhere.
	plan, code := loadPlan(pos[0], sweep.Memory{CellLimit: perCell}, stderr)
	if plan == nil {
		return code
	}
	if *index >= len(plan.Cells) {
		return usageErrorf(stderr, "sweep cell", "--index %d: the plan has cells 0..%d", *index, len(plan.Cells)-1)
	}
	if c := plan.Cells[*index]; limit > 0 && c.Memory > limit {
		fmt.Fprintf(stderr, "segdiff sweep cell: cell %s needs an estimated %s (%s), more than the %s available\n", c, embedded.FormatBytes(c.Memory), c.MemoryHow, embedded.FormatBytes(limit))
		return 2
	}
	r, err := newRunner(*out, 1, 0, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "segdiff sweep cell: %v\n", err)
		return 1
	}
	if _, err := r.RunCell(ctx, plan, *index); err != nil {
		fmt.Fprintf(stderr, "segdiff sweep cell: %v\n", err)
		if errors.Is(err, sweep.ErrInterrupted) {
			return 130
		}
		return 1
	}
	return 0
}

func sweepMerge(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("sweep merge")
	out := fs.String("out", "", "directory to merge into and summarise (required)")
	grid := fs.String("grid", "", "summarise as this grid: take only its cells, matched by configuration hash, whichever grid ran them")
	pos, code, ok := parseCommand(stderr, "sweep merge", sweepUsage+"\nflags:\n", fs, args)
	if !ok {
		return code
	}
	// The values of the flags given first, then the folders, then what is
	// missing (as sweep's).
	var plan *sweep.Plan
	if *grid != "" {
		if plan, code = loadPlan(*grid, sweep.Memory{}, stderr); plan == nil {
			return code
		}
	}
	if len(pos) == 0 {
		return usageErrorf(stderr, "sweep merge", "no folder to merge given (segdiff sweep merge --out DIR IN...)")
	}
	for _, in := range pos {
		if err := isDirArg(in); err != nil {
			return usageErrorf(stderr, "sweep merge", "input %s: %v", in, err)
		}
	}
	if *out == "" {
		return usageErrorf(stderr, "sweep merge", "--out DIR is required: the folder to merge into")
	}
	s, files, err := sweep.Merge(ctx, *out, plan, pos...)
	if err != nil {
		fmt.Fprintf(stderr, "segdiff sweep merge: %v\n", err)
		return 1
	}
	if err := s.WriteMarkdown(stdout); err != nil {
		fmt.Fprintf(stderr, "segdiff sweep merge: %v\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "merged %d cells (%d planned); wrote %s\n", s.Cells, s.Planned, strings.Join(files, ", "))
	return 0
}

func sweepCompare(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("sweep compare")
	opts := sweep.DefaultCompareOptions()
	fs.Func("tolerance", "how much worse a metric may get, a percentage with its sign: 10% for all, or per metric p50=5%,p99=10%,copies=10%,within=5% (within in share points); a metric left out of a per-metric list is not gated (default 10% each)", func(s string) error {
		t, err := parseTolerance(s)
		opts.Tolerance = t
		return err
	})
	fs.Float64Var(&opts.Alpha, "alpha", opts.Alpha, "significance level of the one-sided Mann–Whitney test over seeds")
	cold := fs.Bool("cold", false, "gate the cold (first) slot too, not only the warm ones")
	jsonOut := fs.String("json", "", "also write the comparison as JSON to this file")
	pos, code, ok := parseCommand(stderr, "sweep compare", sweepUsage+"\nflags:\n", fs, args)
	if !ok {
		return code
	}
	// The values of the flags first, then the folders (as sweep's).
	if !(opts.Alpha > 0 && opts.Alpha < 1) {
		return usageErrorf(stderr, "sweep compare", "--alpha %g: want a significance level between 0 and 1, e.g. 0.05", opts.Alpha)
	}
	if *jsonOut != "" {
		if err := checkWritable(*jsonOut); err != nil {
			return usageErrorf(stderr, "sweep compare", "--json %s: %v", *jsonOut, err)
		}
	}
	if len(pos) != 2 {
		return usageErrorf(stderr, "sweep compare", "want two result folders, BASE and NEW; got %d%s", len(pos), listed(pos))
	}
	for i, dir := range pos {
		if err := isDirArg(dir); err != nil {
			return usageErrorf(stderr, "sweep compare", "%s %s: %v", [2]string{"BASE", "NEW"}[i], dir, err)
		}
	}
	if *cold {
		opts.Phases = append(opts.Phases, "cold")
	}
	cmp, err := sweep.Compare(ctx, pos[0], pos[1], opts)
	if err != nil {
		fmt.Fprintf(stderr, "segdiff sweep compare: %v\n", err)
		return 1
	}
	if err := cmp.WriteMarkdown(stdout); err != nil {
		fmt.Fprintf(stderr, "segdiff sweep compare: %v\n", err)
		return 1
	}
	if *jsonOut != "" {
		b, err := json.MarshalIndent(cmp, "", "  ")
		if err == nil {
			err = atomicfile.Write(*jsonOut, b, 0o644)
		}
		if err != nil {
			fmt.Fprintf(stderr, "segdiff sweep compare: write json: %v\n", err)
			return 1
		}
	}
	if n := cmp.Regressions(); n > 0 {
		fmt.Fprintf(stderr, "segdiff sweep compare: %d regressions beyond tolerance\n", n)
		return 1
	}
	return 0
}

// parseTolerance reads a tolerance, always a percentage with its sign:
// "10%" for every metric, or per metric "p50=5%,copies=10%" (within in
// share points). A bare number is refused, as either reading of it would
// surprise someone: 10 as a fraction is 1000 %, 0.1 as a percentage is
// 0.1 %.
func parseTolerance(s string) (map[sweep.Metric]float64, error) {
	names := make([]string, len(sweep.Metrics))
	for i, m := range sweep.Metrics {
		names[i] = string(m)
	}
	percent := func(m sweep.Metric, v string) (float64, error) {
		v = strings.TrimSpace(v)
		num, hasSign := strings.CutSuffix(v, "%")
		f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
		switch {
		case err != nil || math.IsNaN(f) || math.IsInf(f, 0):
			return 0, fmt.Errorf("%q is not a percentage (e.g. 10%%)", v)
		case !hasSign:
			return 0, fmt.Errorf("%q: give a percentage with its sign, e.g. %s%%, so that 0.1 and 10 cannot be confused", v, v)
		case f < 0:
			return 0, fmt.Errorf("%q: want 0%% or more", v)
		case m == sweep.MetricWithin && f > 100:
			return 0, fmt.Errorf("within=%s: a share cannot fall by more than 100 points", v)
		}
		return f / 100, nil
	}
	out := map[sweep.Metric]float64{}
	if !strings.Contains(s, "=") {
		for _, m := range sweep.Metrics {
			f, err := percent(m, s)
			if err != nil {
				return nil, err
			}
			out[m] = f
		}
		return out, nil
	}
	for _, part := range strings.Split(s, ",") {
		k, v, _ := strings.Cut(part, "=")
		m := sweep.Metric(strings.TrimSpace(k))
		if !slices.Contains(sweep.Metrics, m) {
			return nil, fmt.Errorf("unknown metric %q (want %s)%s", k, strings.Join(names, ", "), suggest.DidYouMean(string(m), names, ""))
		}
		if _, dup := out[m]; dup {
			return nil, fmt.Errorf("%s given twice", m)
		}
		f, err := percent(m, v)
		if err != nil {
			return nil, err
		}
		out[m] = f
	}
	return out, nil
}

// sweepBudgets holds the features' budgets against finished cells: each
// budget step of the selected @embedded scenarios, on the run spec of its
// devnet, against every cell of that spec whatever its seed.
func sweepBudgets(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("sweep budgets")
	features := fs.String("features", "features", "the feature files (a folder or files, comma separated)")
	tags := fs.String("tags", steps.TagEmbedded+" && ~"+steps.TagBroken, "godog tag filter selecting the scenarios")
	pos, code, ok := parseCommand(stderr, "sweep budgets", sweepUsage+"\nflags:\n", fs, args)
	if !ok {
		return code
	}
	noFolder := func() int {
		return usageErrorf(stderr, "sweep budgets", "no result folder given (segdiff sweep budgets [flags] DIR...)")
	}
	if len(args) == 0 {
		return noFolder() // told the whole form rather than a default's problem
	}
	// The values of the flags first, then the folders (as sweep's).
	if err := steps.CheckTagFilter(*tags); err != nil {
		return usageErrorf(stderr, "sweep budgets", "--tags: %v", err)
	}
	// Every budget a tag filter can name is held: @slow and @extended rows
	// are opted into here, the filter alone selects.
	suite := steps.New(steps.Config{Backend: "embedded", Log: io.Discard, Slow: true, Extended: true})
	plan, err := suite.Plan(godog.Options{Paths: strings.Split(*features, ","), Tags: *tags})
	if err != nil {
		return usageErrorf(stderr, "sweep budgets", "--features: %v", err)
	}
	rows, err := suite.BudgetRows(plan)
	if err != nil {
		fmt.Fprintf(stderr, "segdiff sweep budgets: %v\n", err)
		return 1
	}
	if len(rows) == 0 {
		return usageErrorf(stderr, "sweep budgets", "the scenarios --tags %q selects in %s check no budget", *tags, *features)
	}
	var specRows []sweep.BudgetRow
	for _, r := range rows {
		spec, err := embedded.SpecOf(r.Devnet)
		if err != nil {
			fmt.Fprintf(stderr, "segdiff sweep budgets: %s: %q: %v\n", r.Feature, r.Scenario, err)
			return 1
		}
		specRows = append(specRows, sweep.BudgetRow{Feature: r.Feature, Scenario: r.Scenario, Spec: spec, Check: r.Check, Budget: r.Budget})
	}
	if len(pos) == 0 {
		return noFolder()
	}
	for _, d := range pos {
		if err := isDirArg(d); err != nil {
			return usageErrorf(stderr, "sweep budgets", "%s: %v", d, err)
		}
	}
	cells, err := sweep.LoadCells(ctx, pos...)
	if err != nil {
		fmt.Fprintf(stderr, "segdiff sweep budgets: %v\n", err)
		return 1
	}
	results := sweep.EvaluateBudgets(specRows, cells)
	if err := sweep.WriteBudgets(stdout, results); err != nil {
		fmt.Fprintf(stderr, "segdiff sweep budgets: %v\n", err)
		return 1
	}
	matched, failed := 0, 0
	for _, r := range results {
		if len(r.Seeds) > 0 {
			matched++
			if !r.Pass {
				failed++
			}
		}
	}
	fmt.Fprintf(stderr, "segdiff sweep budgets: %d budgets, %d with cells of their devnet, %d failing on a cell\n", len(results), matched, failed)
	if matched == 0 {
		fmt.Fprintf(stderr, "segdiff sweep budgets: no cell in %s runs the devnet of any budget: nothing was checked\n", strings.Join(pos, " "))
		return 1
	}
	if failed > 0 {
		return 1
	}
	return 0
}
