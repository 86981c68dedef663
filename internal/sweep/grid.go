package sweep

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/segdiff/segdiff/internal/devnet/embedded"
	"github.com/segdiff/segdiff/internal/stress"
	"github.com/segdiff/segdiff/internal/suggest"
)

// NetworkAxis is the axis of named network mixes: each point sets link and
// latency keys together ("dc20: {datacenter-share: 0.2}"), and by default
// its names are the summary tables' columns.
const NetworkAxis = "network"

// SeedKey is the sim key that varies within a configuration: a
// configuration is a cell without its seed, and its statistics are taken
// over its seeds.
const SeedKey = "seed"

// StressAxis is the axis of named stress conditions from the design's
// stress list ("w50: {withholder: 0.5}", "loss5: {loss-data: 0.05}").
const StressAxis = "stress"

// mixKeys returns the keys a point of a mix axis may set: for the network
// axis the run spec's network keys (links and latency, nothing about the
// protocol, so that a column is a network) and the spread of the uplinks;
// for the stress axis every stress condition (package stress).
func mixKeys(axis string) ([]string, bool) {
	switch axis {
	case NetworkAxis:
		out := []string{stress.UplinkSpread.Name}
		for _, k := range embedded.Keys() {
			if k.Group == "network" {
				out = append(out, k.Name)
			}
		}
		return out, true
	case StressAxis:
		return stress.Names(), true
	}
	return nil, false
}

// Grid is a decoded grid file: a preset, keys fixed for every cell, and
// axes whose product is the cells. Keys are `segdiff sim` flag names
// without the dashes.
type Grid struct {
	// File is the path the grid was read from, for messages.
	File string
	// Name names the sweep in captions and tables (default: the file's stem).
	Name string
	// Description is free text copied into sweep.md.
	Description string
	// Preset is the sim preset every cell starts from ("" is ci).
	Preset     string
	PresetLine int
	// Fixed keys apply to every cell.
	Fixed []Assign
	// Axes vary, first axis slowest.
	Axes []Axis
	// Columns names the axis whose points are the tables' columns and the
	// plots' colours (default: network when the grid has it).
	Columns     string
	ColumnsLine int
	// Source is the file's content.
	Source []byte
}

// Assign is one key set to one value, with the line it came from.
type Assign struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	Line  int    `json:"-"`
}

// Axis is one varied key, or the network axis.
type Axis struct {
	Key    string
	Line   int
	Points []Point
}

// Point is one value of an axis: its label and what it sets.
type Point struct {
	Label string
	Line  int
	Set   []Assign
}

// GridError is one problem of a grid file, at a line and key.
type GridError struct {
	File string
	Line int
	Key  string
	Err  error
}

func (e *GridError) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("%s:%d: %s: %v", e.File, e.Line, e.Key, e.Err)
}

func (e *GridError) Unwrap() error { return e.Err }

// Decode parses a grid file's content. It checks the shape and the key
// names against the run spec's keys (embedded.Keys, the names `segdiff
// sim`'s flags have); values are checked by NewPlan, against the spec's
// validation. Every problem found is returned, each a
// *GridError naming file, line and key.
//
//	name: smoke
//	preset: ci
//	fixed: {nodes: 16, degree: 14, payloads: 2}
//	axes:
//	  mode: [whole, segmented]
//	  network:
//	    home: {}
//	    dc20: {datacenter-share: 0.2}
//	  seed: [7, 8]
func Decode(file string, data []byte) (*Grid, error) {
	d := &decoder{g: &Grid{File: file, Source: data}, known: map[string]bool{}}
	for _, k := range embedded.KeyNames() {
		d.known[k] = true
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return nil, &GridError{File: file, Line: yamlErrorLine(err), Err: fmt.Errorf("parse yaml: %w", err)}
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, &GridError{File: file, Line: max(doc.Line, 1), Err: errors.New("want a mapping with axes (and name, preset, fixed, columns)")}
	}
	d.top(doc.Content[0])
	if len(d.errs) > 0 {
		return nil, errors.Join(d.errs...)
	}
	g := d.g
	if g.Name == "" {
		g.Name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	}
	return g, nil
}

// yamlErrorLine digs the line out of yaml.v3's "yaml: line N: ..." errors.
func yamlErrorLine(err error) int {
	var line int
	if _, scanErr := fmt.Sscanf(err.Error(), "yaml: line %d:", &line); scanErr == nil {
		return line
	}
	return 1
}

type decoder struct {
	g     *Grid
	known map[string]bool
	errs  []error
	seen  map[string]int // key → line where it was set (fixed or axis)
	// mixKeys are the keys some network mix sets: no other place may.
	mixKeys map[string]int
}

func (d *decoder) fail(line int, key, format string, args ...any) {
	d.errs = append(d.errs, &GridError{File: d.g.File, Line: line, Key: key, Err: fmt.Errorf(format, args...)})
}

func (d *decoder) top(n *yaml.Node) {
	d.seen, d.mixKeys = map[string]int{}, map[string]int{}
	haveAxes := false
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "name":
			d.g.Name, _ = d.scalar(k.Value, v)
		case "description":
			d.g.Description, _ = d.scalar(k.Value, v)
		case "preset":
			d.g.Preset, _ = d.scalar(k.Value, v)
			d.g.PresetLine = v.Line
		case "columns":
			d.g.Columns, _ = d.scalar(k.Value, v)
			d.g.ColumnsLine = v.Line
		case "fixed":
			d.fixed(v)
		case "axes":
			haveAxes = true
			d.axes(v)
		default:
			d.fail(k.Line, k.Value, "unknown key (want name, description, preset, fixed, axes, columns)")
		}
	}
	if !haveAxes {
		d.fail(n.Line, "axes", "missing: a grid needs at least one axis (e.g. seed: [7, 8, 9])")
	}
	if d.g.Columns != "" && !d.hasAxis(d.g.Columns) {
		d.fail(d.g.ColumnsLine, "columns", "%q is not an axis of this grid", d.g.Columns)
	}
	if d.g.Columns == "" && d.hasAxis(NetworkAxis) {
		d.g.Columns = NetworkAxis
	}
	if d.g.Columns == SeedKey {
		d.fail(d.g.ColumnsLine, "columns", "seeds are what a configuration's statistics are taken over, not a column")
	}
}

func (d *decoder) hasAxis(key string) bool {
	for _, a := range d.g.Axes {
		if a.Key == key {
			return true
		}
	}
	return false
}

// scalar returns v's value, failing on anything but a scalar.
func (d *decoder) scalar(key string, v *yaml.Node) (string, bool) {
	if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
		d.fail(v.Line, key, "want a single value, got %s", kindName(v))
		return "", false
	}
	return v.Value, true
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	case yaml.AliasNode:
		return "an alias"
	}
	if n.Tag == "!!null" {
		return "nothing"
	}
	return "a value"
}

// key checks k names a sim configuration flag not set elsewhere.
func (d *decoder) key(k *yaml.Node) bool {
	if !d.known[k.Value] {
		d.fail(k.Line, k.Value, "unknown key: not a key of the run spec%s (`segdiff sim --help` lists them as flags)", suggest.DidYouMean(k.Value, slices.Sorted(maps.Keys(d.known)), ""))
		return false
	}
	if line, dup := d.seen[k.Value]; dup {
		d.fail(k.Line, k.Value, "set twice (also at line %d)", line)
		return false
	}
	if line, clash := d.mixKeys[k.Value]; clash {
		d.fail(k.Line, k.Value, "set here and by a network mix at line %d", line)
		return false
	}
	d.seen[k.Value] = k.Line
	return true
}

func (d *decoder) fixed(n *yaml.Node) {
	if n.Kind != yaml.MappingNode {
		d.fail(n.Line, "fixed", "want a mapping of sim keys to values, got %s", kindName(n))
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !d.key(k) {
			continue
		}
		if val, ok := d.scalar(k.Value, v); ok {
			d.g.Fixed = append(d.g.Fixed, Assign{Key: k.Value, Value: val, Line: v.Line})
		}
	}
}

func (d *decoder) axes(n *yaml.Node) {
	if n.Kind != yaml.MappingNode || len(n.Content) == 0 {
		d.fail(n.Line, "axes", "want a mapping of keys to lists of values, got %s", kindName(n))
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if keys, ok := mixKeys(k.Value); ok {
			if line, dup := d.seen[k.Value]; dup {
				d.fail(k.Line, k.Value, "set twice (also at line %d)", line)
				continue
			}
			d.seen[k.Value] = k.Line
			d.mixes(k, v, keys)
			continue
		}
		if !d.key(k) {
			continue
		}
		ax := Axis{Key: k.Value, Line: k.Line}
		if v.Kind != yaml.SequenceNode {
			d.fail(v.Line, k.Value, "an axis wants a list of values, got %s (a single value goes under fixed)", kindName(v))
			continue
		}
		if len(v.Content) == 0 {
			d.fail(v.Line, k.Value, "empty axis: a grid with no value here has no cells")
			continue
		}
		labels := map[string]int{}
		for _, e := range v.Content {
			val, ok := d.scalar(k.Value, e)
			if !ok {
				continue
			}
			if line, dup := labels[val]; dup {
				d.fail(e.Line, k.Value, "value %s listed twice (also at line %d)", val, line)
				continue
			}
			labels[val] = e.Line
			ax.Points = append(ax.Points, Point{Label: val, Line: e.Line, Set: []Assign{{Key: k.Value, Value: val, Line: e.Line}}})
		}
		d.g.Axes = append(d.g.Axes, ax)
	}
}

// mixes decodes an axis of named points (the network mixes of link and
// latency keys; the stress conditions), each setting only keys.
func (d *decoder) mixes(k, v *yaml.Node, keys []string) {
	axis := k.Value
	if v.Kind != yaml.MappingNode {
		d.fail(v.Line, axis, "want named points (home: {}, dc20: {datacenter-share: 0.2}), got %s", kindName(v))
		return
	}
	if len(v.Content) == 0 {
		d.fail(v.Line, axis, "empty axis: a grid with no point here has no cells")
		return
	}
	ax := Axis{Key: axis, Line: k.Line}
	names := map[string]int{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		name, mix := v.Content[i], v.Content[i+1]
		p := Point{Label: name.Value, Line: name.Line}
		if name.Value == "" {
			d.fail(name.Line, axis, "a point needs a name")
			continue
		}
		if line, dup := names[name.Value]; dup {
			d.fail(name.Line, axis, "point %q named twice (also at line %d)", name.Value, line)
			continue
		}
		names[name.Value] = name.Line
		if mix.Kind != yaml.MappingNode && mix.Tag != "!!null" {
			d.fail(mix.Line, axis+"."+name.Value, "want a mapping of keys (%s), got %s", strings.Join(keys, ", "), kindName(mix))
			continue
		}
		for j := 0; j+1 < len(mix.Content); j += 2 {
			mk, mv := mix.Content[j], mix.Content[j+1]
			if !slices.Contains(keys, mk.Value) {
				d.fail(mk.Line, mk.Value, "unknown key in %s point %q (want %s)", axis, name.Value, strings.Join(keys, ", "))
				continue
			}
			if line, clash := d.seen[mk.Value]; clash {
				d.fail(mk.Line, mk.Value, "set by the %s point and at line %d", axis, line)
				continue
			}
			d.mixKeys[mk.Value] = mk.Line
			if val, ok := d.scalar(mk.Value, mv); ok {
				p.Set = append(p.Set, Assign{Key: mk.Value, Value: val, Line: mv.Line})
			}
		}
		ax.Points = append(ax.Points, p)
	}
	d.g.Axes = append(d.g.Axes, ax)
}
