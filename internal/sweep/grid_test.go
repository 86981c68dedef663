package sweep

import (
	"errors"
	"strings"
	"testing"
)

const smokeGrid = `name: t
preset: ci
fixed:
  nodes: 16
  degree: 14
  payloads: 2
axes:
  mode: [whole, segmented]
  network:
    home: {}
    dc20: {datacenter-share: 0.2}
  seed: [7, 8]
`

func TestDecode(t *testing.T) {
	g, err := Decode("sweeps/x.yaml", []byte(strings.Replace(smokeGrid, "name: t\n", "", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if g.Name != "x" || g.Preset != "ci" || g.Columns != NetworkAxis || len(g.Fixed) != 3 || len(g.Axes) != 3 {
		t.Fatalf("grid = name %q preset %q columns %q, %d fixed, %d axes", g.Name, g.Preset, g.Columns, len(g.Fixed), len(g.Axes))
	}
	net := g.Axes[1]
	if net.Key != NetworkAxis || len(net.Points) != 2 || net.Points[1].Label != "dc20" || net.Points[1].Set[0].Key != "datacenter-share" || net.Points[1].Set[0].Line != 10 {
		t.Errorf("network axis = %+v", net)
	}
	if ax := g.Axes[2]; ax.Key != "seed" || len(ax.Points) != 2 || ax.Points[1].Label != "8" {
		t.Errorf("seed axis = %+v", ax)
	}
}

// Every problem names file, line and key.
func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       string // "file:line: key: message" prefix
	}{
		{"unknown top key", "nme: x\naxes: {seed: [1]}\n", "g.yaml:1: nme: unknown key"},
		{"unknown sim key", "fixed:\n  nodez: 3\naxes: {seed: [1]}\n", "g.yaml:2: nodez: unknown key: not a key of the run spec; did you mean nodes?"},
		{"unknown axis key", "axes:\n  seed: [1]\n  moed: [whole]\n", "g.yaml:3: moed: unknown key"},
		{"empty axis", "axes:\n  seed: []\n", "g.yaml:2: seed: empty axis"},
		{"empty network axis", "axes:\n  seed: [1]\n  network: {}\n", "g.yaml:3: network: empty axis"},
		{"axis not a list", "axes:\n  seed: 7\n", "g.yaml:2: seed: an axis wants a list"},
		{"fixed value a list", "fixed:\n  nodes: [1, 2]\naxes: {seed: [1]}\n", "g.yaml:2: nodes: want a single value, got a list"},
		{"key twice", "fixed:\n  nodes: 16\naxes:\n  nodes: [16, 32]\n", "g.yaml:4: nodes: set twice (also at line 2)"},
		{"value twice", "axes:\n  seed: [1, 2, 1]\n", "g.yaml:2: seed: value 1 listed twice"},
		{"protocol key in a mix", "axes:\n  network:\n    a: {mode: whole}\n", "g.yaml:3: mode: unknown key in network point \"a\""},
		{"mix key also fixed", "fixed:\n  datacenter-share: 0.1\naxes:\n  network:\n    a: {datacenter-share: 0.2}\n", "g.yaml:5: datacenter-share: set by the network point and at line 2"},
		{"fixed after a mix", "axes:\n  network:\n    a: {node-class: home}\nfixed:\n  node-class: custom\n", "g.yaml:5: node-class: set here and by a network mix at line 3"},
		{"stress key in a network mix", "axes:\n  network:\n    a: {withholder: 0.5}\n", "g.yaml:3: withholder: unknown key in network point \"a\""},
		{"link key in a stress point", "axes:\n  stress:\n    a: {datacenter-share: 0.5}\n", "g.yaml:3: datacenter-share: unknown key in stress point \"a\""},
		{"mix named twice", "axes:\n  network:\n    a: {}\n    a: {}\n", "g.yaml:4: network: point \"a\" named twice"},
		{"no axes", "name: x\n", "g.yaml:1: axes: missing"},
		{"columns not an axis", "columns: nodes\naxes: {seed: [1]}\n", "g.yaml:1: columns: \"nodes\" is not an axis"},
		{"columns on seeds", "columns: seed\naxes: {seed: [1]}\n", "g.yaml:1: columns: seeds are"},
		{"not a mapping", "- a\n- b\n", "g.yaml:1: want a mapping"},
		{"bad yaml", "axes: [\n", "g.yaml:1: parse yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode("g.yaml", []byte(tt.yaml))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			var ge *GridError
			if !errors.As(err, &ge) || ge.File != "g.yaml" || ge.Line < 1 {
				t.Errorf("err %v is not a *GridError with file and line", err)
			}
		})
	}
}

// FuzzDecode: the decoder never panics, and a grid it accepts has axes
// with points, each point a label.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(smokeGrid))
	f.Add([]byte("axes: {seed: [1, 2], network: {a: {}, b: {datacenter-share: 0.5}}}\ncolumns: seed\n"))
	f.Add([]byte("fixed: {nodes: 3}\naxes:\n  nodes: [1]\n"))
	f.Add([]byte("axes: {network: {a: ~}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := Decode("f.yaml", data)
		if err != nil {
			var ge *GridError
			if !errors.As(err, &ge) {
				t.Fatalf("error %v is not a *GridError", err)
			}
			return
		}
		if len(g.Axes) == 0 {
			t.Fatal("accepted a grid without axes")
		}
		for _, ax := range g.Axes {
			if len(ax.Points) == 0 {
				t.Fatalf("accepted an empty axis %s", ax.Key)
			}
		}
	})
}
