package sweep

import (
	"context"
	"image/color"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Every figure is drawn, PNG and SVG: the ladder, a CDF per row and, for a
// grid varying one parameter, the parameter sweep.
func TestWritePlots(t *testing.T) {
	tests := []struct {
		name, grid string
		want       []string
	}{
		{"modes × networks", smokeGrid, []string{"ladder.png", "ladder.svg", "cdf-whole.png", "cdf-segmented.svg"}},
		{"one parameter", "fixed: {nodes: 16, degree: 14, payloads: 2}\naxes:\n  datacenter-share: [0, 0.2, 0.5]\n  seed: [1, 2]\n",
			[]string{"ladder.png", "cdf-0.2.png", "sweep-p99.png", "sweep-p99.svg"}},
		{"adversary shares", "fixed: {nodes: 16, degree: 14, payloads: 2}\ncolumns: mode\naxes:\n  mode: [segmented, tier2]\n" +
			"  stress:\n    honest: {}\n    withholders25: {withholder: 0.25}\n    silent25: {silent: 0.25}\n    loss: {loss-data: 0.05}\n  seed: [1, 2]\n",
			[]string{"ladder.png", "adversary-p99.png", "adversary-p99.svg"}},
		// More rows than glyph shapes: the ladder names its points.
		{"nine rows", "fixed: {nodes: 16, degree: 14, payloads: 2}\ncolumns: mode\naxes:\n  mode: [segmented]\n  datacenter-share: [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]\n  seed: [1]\n",
			[]string{"ladder.png", "ladder.svg", "sweep-p99.png"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, files := runAndWrite(t, tt.grid)
			var names []string
			for _, f := range files {
				names = append(names, filepath.Base(f))
				if st, err := os.Stat(f); err != nil || st.Size() < 1000 {
					t.Errorf("%s: %v", f, err)
				}
			}
			for _, w := range tt.want {
				if !slices.Contains(names, w) {
					t.Errorf("no %s among %v", w, names)
				}
			}
			if tt.name == "nine rows" && len(s.RowLabels) != 9 {
				t.Errorf("rows %v, want the nine shares", s.RowLabels)
			}
			if len(s.Varied) == 0 {
				t.Error("nothing varied")
			}
			if got := slices.Contains(names, "adversary-p99.png"); got != slices.Contains(tt.want, "adversary-p99.png") {
				t.Errorf("adversary plot written = %v, want %v", got, !got)
			}
			for _, c := range s.Configurations {
				if c.Mode == "" || (c.Faulted != slices.ContainsFunc(c.Coords, func(co Coord) bool { return co.Label == "loss" })) {
					t.Errorf("%s: mode %q, faulted %v", c.Configuration, c.Mode, c.Faulted)
				}
			}
		})
	}
}

// No two series share a colour, however many there are.
func TestSeriesColorDistinct(t *testing.T) {
	for _, n := range []int{1, 3, 7, 8, 12, 21} {
		seen := map[color.RGBA]int{}
		for i := range n {
			r, g, b, a := seriesColor(i, n).RGBA()
			c := color.RGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: uint8(a >> 8)}
			if j, dup := seen[c]; dup {
				t.Errorf("n=%d: series %d and %d share %v", n, j, i, c)
			}
			seen[c] = i
		}
	}
}

// The overview has one row per configuration, in the grid's order, and
// every metric warm and cold beside the wall time.
func TestOverview(t *testing.T) {
	s, _ := runAndWrite(t, smokeGrid)
	ov := s.Tables()[0]
	if len(ov.Rows) != len(s.Configurations) || len(ov.Rows) != 4 {
		t.Fatalf("%d rows for %d configurations, want 4", len(ov.Rows), len(s.Configurations))
	}
	if len(ov.Columns) != 2*len(Metrics)+1 || ov.Columns[1] != "warm p99" || ov.Columns[len(Metrics)] != "cold p50" {
		t.Errorf("columns %v", ov.Columns)
	}
	for i, row := range ov.Rows {
		if row.Label != s.Configurations[i].Configuration || len(row.Entries) != len(ov.Columns) {
			t.Errorf("row %d: %q with %d entries", i, row.Label, len(row.Entries))
		}
		if !strings.Contains(row.Entries[1], " s (") || !strings.HasSuffix(row.Entries[2], "%") {
			t.Errorf("row %d entries %v", i, row.Entries)
		}
	}
}

// runAndWrite runs grid's cells with the fake sim and writes its summary.
func runAndWrite(t *testing.T, grid string) (*Summary, []string) {
	t.Helper()
	p := mustPlan(t, grid)
	r := fakeRunner(t)
	if _, err := r.Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	s, files, err := Write(context.Background(), r.Out, p)
	if err != nil {
		t.Fatal(err)
	}
	return s, files
}
