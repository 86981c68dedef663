package sweep

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/segdiff/segdiff/internal/atomicfile"
)

// Output files of a summary.
const (
	SummaryMarkdown = "sweep.md"
	SummaryJSON     = "sweep.json"
)

// Write summarises the finished cells in dir (of the plan p when given,
// else every cell found there) into dir/sweep.md, dir/sweep.json and the
// plots, and returns the summary. Each file is written whole: through a
// temporary file, renamed into place.
func Write(ctx context.Context, dir string, p *Plan) (*Summary, []string, error) {
	cells, err := LoadCells(ctx, filepath.Join(dir, cellsDir))
	if err != nil {
		return nil, nil, err
	}
	if p != nil {
		cells = ofPlan(cells, p)
	}
	s, err := Summarize(cells)
	if err != nil {
		return nil, nil, err
	}
	if g, err := Decode(gridFile, readOrNil(filepath.Join(dir, gridFile))); err == nil {
		s.Description = g.Description
	}
	if p != nil {
		s.Description = p.Grid.Description
	}
	files, err := writeSummary(dir, s)
	return s, files, err
}

// ofPlan keeps the cells of p and labels them as p does: a cell folder
// keeps the coordinates of the grid that first ran it, and a grid edited
// since (another seed added) renumbers its cells.
func ofPlan(cells []*CellResult, p *Plan) []*CellResult {
	byHash := map[string]*CellResult{}
	for _, c := range cells {
		byHash[c.Hash] = c
	}
	var out []*CellResult
	for _, pc := range p.Cells {
		c, ok := byHash[pc.Hash]
		if !ok {
			continue
		}
		c.Sweep, c.GridFile, c.Columns = p.Grid.Name, p.Grid.File, p.Grid.Columns
		c.Index, c.Cells, c.Coords = pc.Index, len(p.Cells), pc.Coords
		out = append(out, c)
	}
	return out
}

func readOrNil(path string) []byte {
	b, _ := os.ReadFile(path)
	return b
}

func writeSummary(dir string, s *Summary) ([]string, error) {
	var md bytes.Buffer
	if err := s.WriteMarkdown(&md); err != nil {
		return nil, fmt.Errorf("write summary: %w", err)
	}
	js, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("write summary: encode: %w", err)
	}
	files := []string{filepath.Join(dir, SummaryMarkdown), filepath.Join(dir, SummaryJSON)}
	if err := atomicfile.Write(files[0], md.Bytes(), 0o644); err != nil {
		return nil, fmt.Errorf("write summary: %w", err)
	}
	if err := atomicfile.Write(files[1], append(js, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("write summary: %w", err)
	}
	// Plots are drawn in a temporary folder and moved into place one by
	// one, so a reader never opens a half-drawn image.
	tmp, err := os.MkdirTemp(dir, tmpPrefix+"plots-")
	if err != nil {
		return nil, fmt.Errorf("write plots: %w", err)
	}
	defer os.RemoveAll(tmp)
	drawn, err := s.WritePlots(tmp)
	if err != nil {
		return nil, err
	}
	for _, f := range drawn {
		dst := filepath.Join(dir, filepath.Base(f))
		if err := os.Rename(f, dst); err != nil {
			return nil, fmt.Errorf("write plots: %w", err)
		}
		files = append(files, dst)
	}
	return files, nil
}

// Merge copies the finished cells found at or below each input into
// out's cells folder (a cell already there is kept) and writes the
// summary of every cell in out.
//
// With a plan, only the plan's cells are taken, and each is relabelled
// as the plan's cell of the same configuration hash (its record is
// rewritten in out): a cell another grid ran counts for this grid when
// its configuration is the same, and out becomes a folder of p that
// `segdiff sweep` can resume.
//
// Every input is read before out is created or changed: an input that
// does not exist, holds no finished cell or holds a malformed record is
// an error that leaves out as it was.
func Merge(ctx context.Context, out string, p *Plan, inputs ...string) (*Summary, []string, error) {
	var planned map[string]Cell
	if p != nil {
		planned = map[string]Cell{}
		for _, c := range p.Cells {
			planned[c.Hash] = c
		}
	}
	type found struct{ dir, hash string }
	var take []found
	seen := 0
	for _, in := range inputs {
		dirs, err := cellDirs(ctx, in)
		if err != nil {
			return nil, nil, fmt.Errorf("merge: %w", err)
		}
		if len(dirs) == 0 {
			return nil, nil, fmt.Errorf("merge: %s holds no finished cell (no %s at or below it)", in, recordFile)
		}
		seen += len(dirs)
		for _, d := range dirs {
			var rec Record
			if err := readJSON(filepath.Join(d, recordFile), &rec); err != nil {
				return nil, nil, fmt.Errorf("merge: %w", err)
			}
			if _, ok := planned[rec.Hash]; p != nil && !ok {
				continue
			}
			take = append(take, found{d, rec.Hash})
		}
	}
	if p != nil && len(take) == 0 {
		return nil, nil, fmt.Errorf("merge: none of the %d cells in %s is a cell of grid %s", seen, strings.Join(inputs, ", "), p.Grid.Name)
	}
	if err := os.MkdirAll(filepath.Join(out, cellsDir), 0o755); err != nil {
		return nil, nil, fmt.Errorf("merge: %w", err)
	}
	for _, f := range take {
		if err := copyCell(f.dir, out, f.hash); err != nil {
			return nil, nil, err
		}
	}
	if p == nil {
		for _, in := range inputs {
			if b := readOrNil(filepath.Join(in, gridFile)); b != nil && readOrNil(filepath.Join(out, gridFile)) == nil {
				if err := atomicfile.Write(filepath.Join(out, gridFile), b, 0o644); err != nil {
					return nil, nil, fmt.Errorf("merge: %w", err)
				}
			}
		}
	}
	if p != nil {
		if err := adopt(out, p); err != nil {
			return nil, nil, err
		}
	}
	return Write(ctx, out, p)
}

// adopt rewrites the record of every cell of p found in out with p's
// labels for it, and writes p's grid file into out.
func adopt(out string, p *Plan) error {
	for _, c := range p.Cells {
		path := filepath.Join(out, cellsDir, c.Hash, recordFile)
		var rec Record
		if err := readJSON(path, &rec); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			return fmt.Errorf("merge: %w", err)
		}
		if rec.Hash != c.Hash {
			return fmt.Errorf("merge: %s: record of %s in the folder of %s", path, rec.Hash, c.Hash)
		}
		rec.Sweep, rec.GridFile, rec.Columns = p.Grid.Name, p.Grid.File, p.Grid.Columns
		rec.Index, rec.Cells, rec.Coords = c.Index, len(p.Cells), c.Coords
		b, err := json.MarshalIndent(rec, "", "  ")
		if err != nil {
			return fmt.Errorf("merge: %w", err)
		}
		if err := atomicfile.Write(path, b, 0o644); err != nil {
			return fmt.Errorf("merge: %w", err)
		}
	}
	if err := atomicfile.Write(filepath.Join(out, gridFile), p.Grid.Source, 0o644); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	return nil
}
