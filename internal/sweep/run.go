package sweep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/segdiff/segdiff/internal/atomicfile"
	"github.com/segdiff/segdiff/internal/devnet/embedded"
)

// ErrInterrupted is returned when the context ended the sweep: running
// cells were stopped and left nothing behind; finished cells stay.
var ErrInterrupted = errors.New("sweep interrupted")

// stopGrace is how long a stopped cell has to exit after SIGTERM before
// its process group is killed. The sim exits at once on SIGTERM.
const stopGrace = 10 * time.Second

// Runner runs a plan's cells as `segdiff sim` processes.
type Runner struct {
	// Binary is the segdiff executable the cells run.
	Binary string
	// Env is added to each cell's environment.
	Env []string
	// Jobs is how many cells may run at once (at least 1).
	Jobs int
	// Budget bounds the memory reserved for running cells (0: none): a
	// cell starts only when its estimate fits beside the running ones'.
	Budget int64
	// Out is the sweep's output directory.
	Out string
	// Progress receives a line per cell started and finished.
	Progress io.Writer
	// Host is recorded in each cell (for cells run on many machines).
	Host string

	mu   sync.Mutex
	pids map[string]int // running cells' processes, by hash
}

// Outcome is what Run did.
type Outcome struct {
	// Ran counts cells run now, Skipped cells finished before.
	Ran, Skipped int
	// Failed names the cells whose simulation failed (their logs are under
	// failed/); they run again next time.
	Failed []string
	// Wall is the sweep's wall time.
	Wall time.Duration
	// PeakSampledRSS is the largest sum of the running cells' resident
	// sets, sampled every second (/proc/PID/status VmRSS): the sweep's
	// measured peak memory.
	PeakSampledRSS int64
}

type running struct {
	cell    Cell
	reserve int64
	started time.Time
}

type finishedCell struct {
	cell Cell
	rec  *Record
	err  error
}

// Run runs the cells of p that are not finished in r.Out, as many at once
// as Jobs and Budget allow, smallest reservation first when the next one
// does not fit. When ctx ends it stops the running cells (their process
// groups) and returns ErrInterrupted; a cell's folder appears only when
// it finished.
func (r *Runner) Run(ctx context.Context, p *Plan) (Outcome, error) {
	start := time.Now()
	var out Outcome
	if err := os.MkdirAll(filepath.Join(r.Out, cellsDir), 0o755); err != nil {
		return out, fmt.Errorf("create output: %w", err)
	}
	if err := atomicfile.Write(filepath.Join(r.Out, gridFile), p.Grid.Source, 0o644); err != nil {
		return out, fmt.Errorf("write grid: %w", err)
	}
	mem, eta := newMemoryModel(), newETA()
	var pending []Cell
	for _, c := range p.Cells {
		if !finished(r.Out, c.Hash) {
			pending = append(pending, c)
			continue
		}
		out.Skipped++
		if done, err := readCell(filepath.Join(r.Out, cellsDir, c.Hash)); err == nil {
			mem.observe(c, done.PeakRSSBytes)
			eta.observe(c, done.WallSeconds)
		}
	}
	jobs := max(r.Jobs, 1)
	limit := ""
	if p.CellLimit > 0 {
		limit = ", each cell under GOMEMLIMIT " + embedded.FormatBytes(p.CellLimit)
	}
	fmt.Fprintf(r.progress(), "sweep %s: %d cells, %d finished before, %d to run; %d at once, memory budget %s%s\n",
		p.Grid.Name, len(p.Cells), out.Skipped, len(pending), jobs, budgetString(r.Budget), limit)
	active := map[string]running{}
	done := make(chan finishedCell)
	sampled := make(chan int64, 1)
	stopSampling := make(chan struct{})
	go r.sampleRSS(stopSampling, sampled)
	var used int64
	total := len(p.Cells)
	finishedCount := out.Skipped
	for len(pending) > 0 || len(active) > 0 {
		if ctx.Err() == nil {
			pending = r.startFitting(ctx, p, pending, active, &used, mem, done)
		}
		if len(active) == 0 {
			break // interrupted before anything else started
		}
		f := <-done
		a := active[f.cell.Hash]
		delete(active, f.cell.Hash)
		used -= a.reserve
		switch {
		case f.err == nil:
			out.Ran++
			finishedCount++
			mem.observe(f.cell, f.rec.PeakRSSBytes)
			eta.observe(f.cell, f.rec.WallSeconds)
			fmt.Fprintf(r.progress(), "[%d/%d] done %s: %.1f s wall, peak RSS %s (reserved %s)%s; %s\n",
				finishedCount, total, f.cell, f.rec.WallSeconds, embedded.FormatBytes(f.rec.PeakRSSBytes),
				embedded.FormatBytes(a.reserve), r.figures(f.cell), eta.line(pending, active, jobs))
		case ctx.Err() != nil:
			fmt.Fprintf(r.progress(), "stopped %s\n", f.cell)
		default:
			out.Failed = append(out.Failed, f.cell.String())
			fmt.Fprintf(r.progress(), "[%d/%d] FAILED %s: %v\n", finishedCount, total, f.cell, f.err)
		}
	}
	out.Wall = time.Since(start)
	close(stopSampling)
	out.PeakSampledRSS = <-sampled
	r.logRun(start, out, p, ctx.Err() != nil)
	if ctx.Err() != nil {
		return out, fmt.Errorf("%w: %d of %d cells finished; run the same command again to resume", ErrInterrupted, finishedCount, total)
	}
	if len(out.Failed) > 0 {
		return out, fmt.Errorf("run sweep: %d cells failed (logs in %s): %s", len(out.Failed), filepath.Join(r.Out, failedDir), strings.Join(out.Failed, "; "))
	}
	return out, nil
}

// startFitting starts pending cells while a job slot is free and the
// memory budget has room, and returns the cells still pending. A cell
// that fits nowhere beside the running ones waits; when nothing runs, the
// next cell starts whatever its estimate (NewPlan refused cells above the
// budget, so only a refined estimate can exceed it).
func (r *Runner) startFitting(ctx context.Context, p *Plan, pending []Cell, active map[string]running, used *int64, mem *memoryModel, done chan<- finishedCell) []Cell {
	var rest []Cell
	for i, c := range pending {
		if len(active) >= max(r.Jobs, 1) {
			rest = append(rest, pending[i:]...)
			break
		}
		need := mem.estimate(c)
		if len(active) > 0 && r.Budget > 0 && *used+need > r.Budget {
			rest = append(rest, c)
			continue
		}
		*used += need
		active[c.Hash] = running{cell: c, reserve: need, started: time.Now()}
		fmt.Fprintf(r.progress(), "start %s (reserving %s; %d running)\n", c, embedded.FormatBytes(need), len(active))
		// Not errgroup.SetLimit: a cell waits for memory as well as a job
		// slot, and a failed cell must not stop the others.
		go func() {
			rec, err := r.runCell(ctx, p, c, need)
			done <- finishedCell{cell: c, rec: rec, err: err}
		}()
	}
	return rest
}

func (r *Runner) progress() io.Writer {
	if r.Progress == nil {
		return io.Discard
	}
	return r.Progress
}

// figures renders a finished cell's headline warm figures for its
// progress line.
func (r *Runner) figures(c Cell) string {
	res, err := readCell(filepath.Join(r.Out, cellsDir, c.Hash))
	if err != nil {
		return ""
	}
	return fmt.Sprintf("; warm p50 %s p99 %s, copies %.2f by network completion, %.2f over the slot (median)",
		fmtDuration(res.Warm.P50), fmtDuration(res.Warm.P99), float64(res.Warm.ByNetworkCompletion.Mean), float64(res.Warm.OverSlot.Median))
}

func fmtDuration(d time.Duration) string {
	if d < 0 {
		return "never"
	}
	return fmt.Sprintf("%.3f s", d.Seconds())
}

func budgetString(b int64) string {
	if b <= 0 {
		return "none"
	}
	return embedded.FormatBytes(b)
}

// RunCell runs one cell of p into r.Out unless it is finished there: the
// cluster path, where each machine runs the cells it is given.
func (r *Runner) RunCell(ctx context.Context, p *Plan, index int) (skipped bool, err error) {
	if index < 0 || index >= len(p.Cells) {
		return false, fmt.Errorf("run cell: index %d, the plan has cells 0..%d", index, len(p.Cells)-1)
	}
	c := p.Cells[index]
	if err := os.MkdirAll(filepath.Join(r.Out, cellsDir), 0o755); err != nil {
		return false, fmt.Errorf("create output: %w", err)
	}
	if err := atomicfile.Write(filepath.Join(r.Out, gridFile), p.Grid.Source, 0o644); err != nil {
		return false, fmt.Errorf("write grid: %w", err)
	}
	if finished(r.Out, c.Hash) {
		fmt.Fprintf(r.progress(), "cell %d %s: finished before, not rerun\n", index, c)
		return true, nil
	}
	fmt.Fprintf(r.progress(), "cell %d/%d %s (estimated %s)\n", index, len(p.Cells), c, embedded.FormatBytes(c.Memory))
	rec, err := r.runCell(ctx, p, c, c.Memory)
	if err != nil {
		if ctx.Err() != nil {
			return false, fmt.Errorf("%w: cell %s stopped", ErrInterrupted, c)
		}
		return false, err
	}
	fmt.Fprintf(r.progress(), "cell %d %s: %.1f s wall, peak RSS %s%s\n", index, c, rec.WallSeconds, embedded.FormatBytes(rec.PeakRSSBytes), r.figures(c))
	return false, nil
}

// runCell runs one simulation into a temporary folder and renames it into
// place once the sim's results are checked and the record written.
func (r *Runner) runCell(ctx context.Context, p *Plan, c Cell, reserve int64) (*Record, error) {
	cells := filepath.Join(r.Out, cellsDir)
	if err := removeStale(r.Out, c.Hash); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(cells, tmpPrefix+c.Hash+"-")
	if err != nil {
		return nil, fmt.Errorf("run cell: %w", err)
	}
	keep := false
	defer func() {
		if !keep {
			os.RemoveAll(tmp)
		}
	}()
	logf, err := os.Create(filepath.Join(tmp, logFile))
	if err != nil {
		return nil, fmt.Errorf("run cell: %w", err)
	}
	defer logf.Close()
	// The sweep holds the memory budget; the sim's own check against the
	// machine's available memory would count the cells beside it twice.
	spec := filepath.Join(tmp, specFile)
	if err := embedded.WriteSpec(spec, c.Config); err != nil {
		return nil, fmt.Errorf("run cell: %w", err)
	}
	args := []string{"sim", "--spec", spec, "--json", filepath.Join(tmp, simFile), "--max-memory", "0"}
	cmd := exec.CommandContext(ctx, r.Binary, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), r.Env...)
	if p.CellLimit > 0 {
		cmd.Env = append(cmd.Env, fmt.Sprintf("GOMEMLIMIT=%d", p.CellLimit))
		// The cell is planned at its limit anyway, so the collector may
		// wait for it: a 500-node tier2 cell spends a fifth less time per
		// slot than at GOGC=100 (embedded/README.md, "Two network
		// models"). A GOGC the caller set wins.
		if _, set := os.LookupEnv("GOGC"); !set {
			cmd.Env = append(cmd.Env, "GOGC=off")
		}
	}
	cmd.SysProcAttr = childAttr()
	// The cell runs in its own process group, so a terminal's Ctrl-C
	// reaches the sweep alone, and stopping a cell stops all it started.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = stopGrace
	started := time.Now()
	runErr := cmd.Start()
	if runErr == nil {
		r.track(c.Hash, cmd.Process.Pid)
		runErr = cmd.Wait()
		r.track(c.Hash, 0)
	}
	if runErr != nil {
		if ctx.Err() == nil {
			r.keepFailure(c, tmp)
		}
		return nil, fmt.Errorf("run cell %s: segdiff sim: %w", c, runErr)
	}
	rec := &Record{
		Sweep: p.Grid.Name, GridFile: p.Grid.File, Columns: p.Grid.Columns,
		Index: c.Index, Cells: len(p.Cells), Hash: c.Hash, Coords: c.Coords, Config: c.Config,
		Started: started.UTC(), WallSeconds: time.Since(started).Seconds(),
		PeakRSSBytes: peakRSS(cmd.ProcessState), MemoryEstimateBytes: reserve, Host: r.Host,
	}
	if err := checkSimOutput(filepath.Join(tmp, simFile), c); err != nil {
		r.keepFailure(c, tmp)
		return nil, err
	}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("run cell: encode record: %w", err)
	}
	if err := os.WriteFile(filepath.Join(tmp, recordFile), b, 0o644); err != nil {
		return nil, fmt.Errorf("run cell: %w", err)
	}
	if err := logf.Close(); err != nil {
		return nil, fmt.Errorf("run cell: %w", err)
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err := os.Rename(tmp, filepath.Join(cells, c.Hash)); err != nil {
		if finished(r.Out, c.Hash) {
			return rec, nil // another runner finished the same cell first
		}
		return nil, fmt.Errorf("run cell: %w", err)
	}
	keep = true
	return rec, nil
}

// checkSimOutput checks the sim ran exactly the configuration the cell
// is keyed by: a sim that resolved its flags differently would file its
// results under the wrong hash.
func checkSimOutput(path string, c Cell) error {
	var runs []struct {
		Result *struct {
			Config embedded.Config `json:"config"`
		} `json:"result"`
	}
	if err := readJSON(path, &runs); err != nil {
		return fmt.Errorf("run cell %s: %w", c, err)
	}
	if len(runs) != 1 || runs[0].Result == nil {
		return fmt.Errorf("run cell %s: the sim wrote %d runs, want one", c, len(runs))
	}
	if got := Hash(runs[0].Result.Config); got != c.Hash {
		return fmt.Errorf("run cell %s: the sim ran configuration %s, the sweep planned %s (a different segdiff build?)", c, got, c.Hash)
	}
	return nil
}

// keepFailure saves a failed attempt's log as failed/<hash>.log.
func (r *Runner) keepFailure(c Cell, tmp string) {
	b, err := os.ReadFile(filepath.Join(tmp, logFile))
	if err != nil {
		return
	}
	dir := filepath.Join(r.Out, failedDir)
	if os.MkdirAll(dir, 0o755) == nil {
		_ = atomicfile.Write(filepath.Join(dir, c.Hash+".log"), b, 0o644)
	}
}

// runsLog is appended a line per sweep invocation: when, how long, how
// many cells, and the measured peak memory (the sweep's cost figures).
const runsLog = "runs.jsonl"

func (r *Runner) logRun(start time.Time, out Outcome, p *Plan, interrupted bool) {
	line, err := json.Marshal(map[string]any{
		"started": start.UTC(), "wall_seconds": out.Wall.Seconds(), "cells": len(p.Cells), "ran": out.Ran, "skipped": out.Skipped,
		"failed": len(out.Failed), "interrupted": interrupted, "jobs": max(r.Jobs, 1), "memory_budget_bytes": r.Budget,
		"cell_memory_limit_bytes": p.CellLimit,
		"peak_sampled_rss_bytes":  out.PeakSampledRSS, "host": r.Host,
	})
	if err != nil {
		return
	}
	f, err := os.OpenFile(filepath.Join(r.Out, runsLog), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	f.Write(append(line, '\n'))
}

// track records (pid > 0) or forgets a running cell's process.
func (r *Runner) track(hash string, pid int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pids == nil {
		r.pids = map[string]int{}
	}
	if pid > 0 {
		r.pids[hash] = pid
	} else {
		delete(r.pids, hash)
	}
}

// sampleRSS sums the running cells' resident sets every second until stop
// closes, then sends the largest sum. Each cell's own peak (getrusage) is
// exact but says nothing of when it happened; the sum over time is what
// the machine had to hold.
func (r *Runner) sampleRSS(stop <-chan struct{}, peak chan<- int64) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	var most int64
	for {
		select {
		case <-stop:
			peak <- most
			return
		case <-t.C:
		}
		r.mu.Lock()
		var sum int64
		for _, pid := range r.pids {
			sum += residentBytes(pid)
		}
		r.mu.Unlock()
		most = max(most, sum)
	}
}

// residentBytes reads a process's resident set from /proc (0 if gone or
// not Linux).
func residentBytes(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb int64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), &kb)
			return kb << 10
		}
	}
	return 0
}

// peakRSS is a finished process's peak resident set in bytes.
func peakRSS(ps *os.ProcessState) int64 {
	if ps == nil {
		return 0
	}
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return int64(ru.Maxrss) << 10 // KiB on Linux
	}
	return 0
}
