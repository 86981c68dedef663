package sweep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/segdiff/segdiff/internal/devnet/embedded"
)

// A sweep's output directory:
//
//	DIR/grid.yaml               the grid file the sweep ran
//	DIR/cells/<hash>/cell.json  what ran, how long and how large (Record)
//	DIR/cells/<hash>/spec.json  the run spec (`segdiff sim --spec`)
//	DIR/cells/<hash>/sim.json   the sim's --json output
//	DIR/cells/<hash>/sim.log    the sim's progress (its stderr)
//	DIR/cells/.tmp-<hash>-*     a cell being run; renamed into place whole
//	DIR/failed/<hash>.log       the log of a cell's last failed attempt
//	DIR/sweep.md, sweep.json    the summary; the plots beside them
//
// A cell folder exists only complete (it is renamed into place), so a
// folder's presence is what "finished" means.
const (
	cellsDir   = "cells"
	failedDir  = "failed"
	recordFile = "cell.json"
	simFile    = "sim.json"
	specFile   = "spec.json"
	logFile    = "sim.log"
	gridFile   = "grid.yaml"
	tmpPrefix  = ".tmp-"
)

// Record is cell.json: what a finished cell ran and what it cost.
type Record struct {
	Sweep    string `json:"sweep"`
	GridFile string `json:"grid_file"`
	// Columns is the grid's column axis, so a merge lays tables out alike.
	Columns string `json:"columns,omitempty"`
	// Index and Cells place the cell in its plan.
	Index  int     `json:"index"`
	Cells  int     `json:"cells"`
	Hash   string  `json:"hash"`
	Coords []Coord `json:"coords"`
	// Config is the run spec the cell ran (its spec.json).
	Config embedded.Config `json:"config"`
	// Started is when the process started; WallSeconds how long it took.
	Started     time.Time `json:"started"`
	WallSeconds float64   `json:"wall_seconds"`
	// PeakRSSBytes is the process's peak resident set (getrusage), and
	// MemoryEstimateBytes what the sweep reserved for it.
	PeakRSSBytes        int64  `json:"peak_rss_bytes"`
	MemoryEstimateBytes int64  `json:"memory_estimate_bytes"`
	Host                string `json:"host,omitempty"`
}

// Configuration names the record's configuration (its coordinates without
// the seed).
func (r Record) Configuration() string { return coordString(withoutSeed(r.Coords)) }

// simRun is the part of one `segdiff sim --json` entry a sweep reads.
type simRun struct {
	Summary     embedded.Summary `json:"summary"`
	ColdSummary embedded.Summary `json:"cold_summary"`
	WallSecs    float64          `json:"wall_seconds"`
	Result      *embedded.Result `json:"result"`
}

// CellResult is a finished cell: its record, its warm and cold summaries
// and every receiver's completion in seconds (+Inf: never), pooled over
// the warm slots and over the cold one.
type CellResult struct {
	Record
	Warm, Cold                     embedded.Summary
	WarmCompletion, ColdCompletion []float64
}

// Seed is the seed the cell ran.
func (c *CellResult) Seed() int64 { return c.Config.Seed }

// readCell loads a finished cell folder.
func readCell(dir string) (*CellResult, error) {
	var rec Record
	if err := readJSON(filepath.Join(dir, recordFile), &rec); err != nil {
		return nil, err
	}
	var runs []simRun
	if err := readJSON(filepath.Join(dir, simFile), &runs); err != nil {
		return nil, err
	}
	if len(runs) != 1 || runs[0].Summary.Slots == 0 {
		return nil, fmt.Errorf("read cell %s: %s holds %d runs, want one", dir, simFile, len(runs))
	}
	run := runs[0]
	c := &CellResult{Record: rec, Warm: run.Summary, Cold: run.ColdSummary}
	for _, d := range run.Summary.Completion {
		c.WarmCompletion = append(c.WarmCompletion, seconds(d))
	}
	for _, d := range run.ColdSummary.Completion {
		c.ColdCompletion = append(c.ColdCompletion, seconds(d))
	}
	return c, nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read cell: %w", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("read cell: decode %s: %w", path, err)
	}
	return nil
}

// cellDirs finds finished cell folders at or below root: folders holding
// a cell.json, outside any temporary folder. root may be a sweep's output
// directory, its cells folder, a single cell folder, or a folder of
// downloaded artifacts holding any of them.
func cellDirs(ctx context.Context, root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !d.IsDir() {
			return nil
		}
		if strings.HasPrefix(d.Name(), tmpPrefix) {
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(path, recordFile)); err == nil {
			out = append(out, path)
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("find cells in %s: %w", root, err)
	}
	return out, nil
}

// LoadCells reads every finished cell at or below each root, once per
// hash (the first found wins), in plan order.
func LoadCells(ctx context.Context, roots ...string) ([]*CellResult, error) {
	var out []*CellResult
	seen := map[string]bool{}
	for _, root := range roots {
		dirs, err := cellDirs(ctx, root)
		if err != nil {
			return nil, err
		}
		for _, d := range dirs {
			c, err := readCell(d)
			if err != nil {
				return nil, err
			}
			if seen[c.Hash] {
				continue
			}
			seen[c.Hash] = true
			out = append(out, c)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	return out, nil
}

// finished reports whether dir/cells/<hash> is a finished cell.
func finished(dir, hash string) bool {
	_, err := os.Stat(filepath.Join(dir, cellsDir, hash, recordFile))
	return err == nil
}

// removeStale deletes what an interrupted attempt at hash left in dir.
func removeStale(dir, hash string) error {
	matches, err := filepath.Glob(filepath.Join(dir, cellsDir, tmpPrefix+hash+"-*"))
	if err != nil {
		return err
	}
	for _, m := range matches {
		if err := os.RemoveAll(m); err != nil {
			return fmt.Errorf("remove stale cell: %w", err)
		}
	}
	return nil
}

// copyCell copies the finished cell folder src into dir's cells folder,
// through a temporary folder renamed into place.
func copyCell(src, dir, hash string) error {
	dst := filepath.Join(dir, cellsDir, hash)
	if _, err := os.Stat(dst); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Join(dir, cellsDir), 0o755); err != nil {
		return fmt.Errorf("copy cell: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Join(dir, cellsDir), tmpPrefix+hash+"-")
	if err != nil {
		return fmt.Errorf("copy cell: %w", err)
	}
	entries, err := os.ReadDir(src)
	if err == nil {
		for _, e := range entries {
			if e.IsDir() {
				continue
			}
			var b []byte
			if b, err = os.ReadFile(filepath.Join(src, e.Name())); err != nil {
				break
			}
			if err = os.WriteFile(filepath.Join(tmp, e.Name()), b, 0o644); err != nil {
				break
			}
		}
	}
	if err == nil {
		err = os.Rename(tmp, dst)
	}
	if err != nil {
		os.RemoveAll(tmp)
		if errors.Is(err, fs.ErrExist) && finished(dir, hash) {
			return nil // another writer finished the same cell
		}
		return fmt.Errorf("copy cell %s: %w", src, err)
	}
	return nil
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}
