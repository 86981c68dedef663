package sweep

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/segdiff/segdiff/internal/devnet/embedded"
	"github.com/segdiff/segdiff/internal/devnet/embedded/netmodel"
)

// Coord is a cell's point on one axis.
type Coord struct {
	Axis  string `json:"axis"`
	Label string `json:"label"`
}

// Cell is one simulation of a sweep: one point on every axis.
type Cell struct {
	// Index is the cell's place in the plan (GitHub matrix entry, Kubernetes
	// completion index).
	Index int
	// Coords has one entry per axis, in the grid's axis order.
	Coords []Coord
	// Set is what the cell sets on top of the preset: the fixed keys, then
	// each axis point's.
	Set []Assign
	// Config is the cell's run spec: the grid's preset with Set applied;
	// the cell runs `segdiff sim --spec` with it.
	Config embedded.Config
	// Hash keys the cell's result folder: a digest of Config.
	Hash string
	// Memory is Config.MemoryEstimate, capped by the cells' GOMEMLIMIT.
	Memory    int64
	MemoryHow string
}

// String names the cell by its coordinates: "mode=whole network=home seed=7".
func (c Cell) String() string { return coordString(c.Coords) }

// Configuration names the cell's configuration: its coordinates without
// the seed.
func (c Cell) Configuration() string { return coordString(withoutSeed(c.Coords)) }

func configName(c Cell) string {
	if name := c.Configuration(); name != "" {
		return "configuration " + name
	}
	return "every cell"
}

func coordString(cs []Coord) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.Axis + "=" + c.Label
	}
	return strings.Join(parts, " ")
}

func withoutSeed(cs []Coord) []Coord {
	out := make([]Coord, 0, len(cs))
	for _, c := range cs {
		if c.Axis != SeedKey {
			out = append(out, c)
		}
	}
	return out
}

// Plan is a grid's cells, every one checked against the sim.
type Plan struct {
	Grid  *Grid
	Cells []Cell
	// CellLimit is the GOMEMLIMIT the cells were planned with and run
	// under (Memory.CellLimit; 0: none).
	CellLimit int64
}

// Memory is what a machine gives a sweep's cells.
type Memory struct {
	// Budget bounds each cell's estimate (0: no check).
	Budget int64
	// CellLimit is the Go runtime's soft memory limit each cell runs
	// under (GOMEMLIMIT; 0: none). It caps a cell's estimate at the
	// limit plus a tenth: the runtime collects harder rather than grow
	// past it, trading wall time for memory. A cell whose live heap
	// exceeds the limit still grows; its measured peak then refines the
	// estimate of the cells of its class.
	CellLimit int64
}

// cap returns the estimate a cell is planned with under m.
func (m Memory) cap(est int64, how string) (int64, string) {
	if m.CellLimit <= 0 {
		return est, how
	}
	if c := m.CellLimit + m.CellLimit/10; c < est {
		return c, fmt.Sprintf("GOMEMLIMIT %s + a tenth; without it %s: %s", embedded.FormatBytes(m.CellLimit), embedded.FormatBytes(est), how)
	}
	return est, how
}

// NewPlan expands g into its cells and checks every cell before anything
// runs: each value in the form its run-spec key takes, each cell's spec
// with the spec's one validation, no two cells alike, and (mem.Budget > 0)
// each cell's memory estimate, capped by mem.CellLimit, within the budget.
// Every problem is a *GridError naming the file, line and key.
func NewPlan(g *Grid, mem Memory) (*Plan, error) {
	var errs problems
	if _, err := embedded.Preset(g.Preset); err != nil {
		errs.add(g.File, max(g.PresetLine, 1), "preset", err)
		return nil, errs.join()
	}
	// Each value alone first, so that a value of the wrong form is named
	// once at its own line rather than once per cell.
	for _, a := range g.assignments() {
		var probe embedded.Config
		if err := probe.Set(a.Key, a.Value); err != nil {
			errs.add(g.File, a.Line, a.Key, err)
		}
	}
	if errs.any() {
		return nil, errs.join()
	}
	p := &Plan{Grid: g, CellLimit: mem.CellLimit}
	byHash := map[string]int{}
	g.product(func(coords []Coord, set []Assign) {
		c := Cell{Index: len(p.Cells), Coords: coords, Set: set}
		cfg, err := g.resolve(set)
		if err != nil {
			errs.cell(g, c, err)
			return
		}
		c.Config = cfg
		c.Hash = Hash(cfg)
		c.Memory, c.MemoryHow = mem.cap(cfg.MemoryEstimate())
		if budget := mem.Budget; budget > 0 && c.Memory > budget {
			key, line := g.memoryKey(set)
			// Named by configuration: the seed does not change the estimate.
			errs.add(g.File, line, key, fmt.Errorf("%s needs an estimated %s (%s), more than the memory budget of %s",
				configName(c), embedded.FormatBytes(c.Memory), c.MemoryHow, embedded.FormatBytes(budget)))
		}
		if first, dup := byHash[c.Hash]; dup {
			errs.add(g.File, g.axesLine(), "axes", fmt.Errorf("cells %s and %s resolve to the same configuration", p.Cells[first], c))
		}
		byHash[c.Hash] = c.Index
		p.Cells = append(p.Cells, c)
	})
	if errs.any() {
		return nil, errs.join()
	}
	return p, nil
}

// Hash is the digest that keys a configuration's result folder: the first
// 16 hex digits of SHA-256 over its JSON, every field included, so any
// change of any value is another cell.
func Hash(cfg embedded.Config) string {
	// The packet model spelled out hashes as the unset key it is, so the
	// cells run before net_model existed still count as finished.
	if cfg.NetModel == netmodel.Packets {
		cfg.NetModel = ""
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		panic(fmt.Sprintf("sweep: encode config: %v", err)) // plain data: cannot fail
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// resolve returns the run spec of a cell that sets set: the grid's preset
// with each key set, validated.
func (g *Grid) resolve(set []Assign) (embedded.Config, error) {
	cfg, err := embedded.Preset(g.Preset)
	if err != nil {
		return cfg, err
	}
	for _, a := range set {
		if err := cfg.Set(a.Key, a.Value); err != nil {
			return cfg, err
		}
	}
	return cfg, cfg.Validate()
}

// assignments lists every distinct assignment of the grid.
func (g *Grid) assignments() []Assign {
	out := append([]Assign(nil), g.Fixed...)
	for _, ax := range g.Axes {
		for _, p := range ax.Points {
			out = append(out, p.Set...)
		}
	}
	return out
}

// product calls f for every cell, first axis slowest.
func (g *Grid) product(f func(coords []Coord, set []Assign)) {
	var walk func(i int, coords []Coord, set []Assign)
	walk = func(i int, coords []Coord, set []Assign) {
		if i == len(g.Axes) {
			f(append([]Coord(nil), coords...), append([]Assign(nil), set...))
			return
		}
		ax := g.Axes[i]
		for _, p := range ax.Points {
			walk(i+1, append(coords, Coord{Axis: ax.Key, Label: p.Label}), append(set, p.Set...))
		}
	}
	walk(0, nil, append([]Assign(nil), g.Fixed...))
}

// memoryKey names where a cell's size came from: its nodes value, else its
// degree, else the preset.
func (g *Grid) memoryKey(set []Assign) (string, int) {
	for _, k := range []string{"nodes", "degree"} {
		for _, a := range set {
			if a.Key == k {
				return k, a.Line
			}
		}
	}
	return "preset", max(g.PresetLine, 1)
}

func (g *Grid) axesLine() int {
	if len(g.Axes) > 0 {
		return g.Axes[0].Line - 1
	}
	return 1
}

// problems collects GridErrors once each.
type problems struct {
	errs []error
	seen map[string]bool
}

func (p *problems) add(file string, line int, key string, err error) {
	e := &GridError{File: file, Line: line, Key: key, Err: err}
	if p.seen == nil {
		p.seen = map[string]bool{}
	}
	if p.seen[e.Error()] {
		return
	}
	p.seen[e.Error()] = true
	p.errs = append(p.errs, e)
}

// cell files a cell's resolve error by the keys the sim named: at the line
// that set the key, or at the preset's line when the preset's value is the
// one that does not fit.
func (p *problems) cell(g *Grid, c Cell, err error) {
	var ve *embedded.ValidationError
	if !errors.As(err, &ve) {
		p.add(g.File, g.axesLine(), "axes", fmt.Errorf("cell %s: %w", c, err))
		return
	}
	flags := map[string]string{}
	for _, k := range embedded.Keys() {
		flags[k.JSON] = k.Name
	}
	for _, fe := range ve.Fields {
		key, ok := flags[fe.Key]
		if !ok {
			key = fe.Key
		}
		line := 0
		for _, a := range c.Set {
			if a.Key == key {
				line = a.Line
			}
		}
		msg := fe.Err
		if line == 0 {
			line = max(g.PresetLine, 1)
			msg = fmt.Errorf("%w (the preset %s's value does not fit this grid; set %s under fixed or on an axis)", fe.Err, presetName(g.Preset), key)
		}
		p.add(g.File, line, key, msg)
	}
}

func presetName(p string) string {
	if p == "" {
		return embedded.PresetCI
	}
	return p
}

func (p *problems) any() bool { return len(p.errs) > 0 }

// join returns the problems in line order.
func (p *problems) join() error {
	slices.SortStableFunc(p.errs, func(a, b error) int {
		var ga, gb *GridError
		errors.As(a, &ga)
		errors.As(b, &gb)
		return ga.Line - gb.Line
	})
	return errors.Join(p.errs...)
}
