package report

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/segdiff/segdiff/diffusion/mode"
)

// The run's plots draw one panel per devnet: a budget belongs to the devnet
// it was checked on, so tier3's median budget is never a line over
// segmented-batch's samples, nor a stress row's over the plain network's.

// panel is one devnet's samples of one kind and the budgets checked on that
// devnet.
type panel struct {
	Devnet string // config key, see Distribution.Devnet
	Label  string // Run.devnetLabel
	Mode   string
	// Values are the samples' values, sorted; +Inf (never) sorts last and
	// keeps the curve below 1.
	Values []float64
	// Budgets are sorted by value, one per label and value (scenarios
	// sharing a check on one devnet record the same budget).
	Budgets []BudgetLine
}

// panels returns kind's panels, one per devnet with samples of kind, in
// the diffusion ladder's order of modes (package mode), then by label.
func panels(run Run, kind string) []panel {
	var out []panel
	for _, d := range run.Distributions {
		if d.Kind != kind || len(d.Samples) == 0 {
			continue
		}
		p := panel{Devnet: d.Devnet, Label: run.devnetLabel(d.Devnet), Mode: d.Mode}
		for _, s := range d.Samples {
			p.Values = append(p.Values, s.Value)
		}
		sort.Float64s(p.Values)
		for _, b := range run.Budgets {
			same := func(have BudgetLine) bool { return have.Label == b.Label && have.Value == b.Value }
			if b.Kind == kind && b.Devnet == d.Devnet && !slices.ContainsFunc(p.Budgets, same) {
				p.Budgets = append(p.Budgets, b)
			}
		}
		sort.SliceStable(p.Budgets, func(i, j int) bool { return p.Budgets[i].Value < p.Budgets[j].Value })
		out = append(out, p)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if ri, rj := modeRank(out[i].Mode), modeRank(out[j].Mode); ri != rj {
			return ri < rj
		}
		return out[i].Label < out[j].Label
	})
	return out
}

// modeRank is m's place on the diffusion ladder; unknown modes go last.
func modeRank(m string) int {
	names := mode.Names()
	if i := slices.Index(names, m); i >= 0 {
		return i
	}
	return len(names)
}

// modeColors are the modes' colours by place on the ladder: the two whole
// modes in reds, tier2 green so that it is not taken for whole.
var modeColors = []color.Color{
	plotutil.DarkColors[0], plotutil.DarkColors[5], plotutil.DarkColors[2], plotutil.DarkColors[3],
	plotutil.DarkColors[4], plotutil.DarkColors[1], plotutil.DarkColors[6],
}

// modeColor is m's colour in every plot of a run.
func modeColor(m string) color.Color {
	if i := modeRank(m); i < len(mode.Names()) {
		return modeColors[i%len(modeColors)]
	}
	return color.Gray{Y: 90}
}

// budgetDashes are the budget lines' dash patterns, one per budget label in
// the order a figure first meets them; the legend names each.
var budgetDashes = [][]vg.Length{
	{vg.Points(6), vg.Points(3)},
	{vg.Points(2), vg.Points(2)},
	{vg.Points(8), vg.Points(3), vg.Points(2), vg.Points(3)},
	{vg.Points(12), vg.Points(4)},
}

var budgetColor = color.Gray{Y: 40}

// cdfPlot is one of the run's figures: the CDF of one kind of sample, one
// panel per devnet.
type cdfPlot struct {
	kind, stem, title, xLabel string
	unit                      string // after a budget's value in a panel title
}

// runPlots are the figures Write draws when the run has samples of their
// kind.
var runPlots = []cdfPlot{
	{kind: KindCompletion, stem: PlotCompletionCDF, title: "Payload completion from the builder's reveal",
		xLabel: "seconds after the reveal", unit: "s"},
	{kind: KindCopies, stem: PlotCopies, title: "Payload copies received per node and warm slot, over the slot",
		xLabel: "copies: (data + control bytes) ÷ compressed size", unit: " copies"},
}

const (
	panelWidth  = 9 * vg.Centimeter
	panelHeight = 6.5 * vg.Centimeter
	maxColumns  = 4
)

// panelFigure is a grid of panels under one title, with a shared legend in
// a strip on the right.
type panelFigure struct {
	title  string
	grid   [][]*plot.Plot // rows of columns; nil where the last row ends
	legend plot.Legend
}

// figure draws ps: each panel's CDF in its mode's colour and, as dashed
// vertical lines, only the budgets checked on that panel's devnet; every
// panel shares the x axis so that devnets compare by position.
func (c cdfPlot) figure(run Run, ps []panel) (*panelFigure, error) {
	xmax := 0.0
	for _, p := range ps {
		for _, v := range p.Values {
			if !math.IsInf(v, 0) {
				xmax = math.Max(xmax, v)
			}
		}
		for _, b := range p.Budgets {
			xmax = math.Max(xmax, b.Value)
		}
	}
	if xmax <= 0 {
		xmax = 1
	}
	xmax *= 1.05
	cols := min(maxColumns, int(math.Ceil(math.Sqrt(float64(len(ps))))))
	rows := (len(ps) + cols - 1) / cols
	f := &panelFigure{
		title:  c.title + "\n" + caption(run) + " · one panel per devnet: share of nodes × warm slots; dashed, the budgets checked on it",
		grid:   make([][]*plot.Plot, rows),
		legend: plot.NewLegend(),
	}
	for j := range f.grid {
		f.grid[j] = make([]*plot.Plot, cols)
	}
	f.legend.Top, f.legend.Left = true, true
	f.legend.TextStyle.Font.Size = vg.Points(9)
	var modes, labels []string
	var budgetKeys []plot.Thumbnailer // the first line of each label, for the legend
	for i, pn := range ps {
		p := plot.New()
		p.Title.TextStyle.Font.Size = vg.Points(9)
		p.Title.Text = wrapText(panelTitle(pn, c.unit), p.Title.TextStyle, panelWidth-vg.Centimeter)
		p.Add(plotter.NewGrid())
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, xmax, 0, 1
		if i%cols == 0 {
			// Short: a vertical label longer than the data area would
			// stretch this column's panels (gonum pads for it).
			p.Y.Label.Text = "share (nodes × slots)"
			p.Y.Label.TextStyle.Font.Size = vg.Points(10)
		}
		if i+cols >= len(ps) {
			p.X.Label.Text = c.xLabel
		}
		curve, err := cdfLine(pn.Values, xmax)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", c.stem, pn.Label, err)
		}
		curve.Color = modeColor(pn.Mode)
		p.Add(curve)
		if !slices.Contains(modes, pn.Mode) {
			modes = append(modes, pn.Mode)
			f.legend.Add(pn.Mode, curve)
		}
		for _, b := range pn.Budgets {
			l, err := plotter.NewLine(plotter.XYs{{X: b.Value, Y: 0}, {X: b.Value, Y: 1}})
			if err != nil {
				return nil, fmt.Errorf("%s %s: budget %s: %w", c.stem, pn.Label, b.Label, err)
			}
			k := slices.Index(labels, b.Label)
			if k < 0 {
				k = len(labels)
				labels, budgetKeys = append(labels, b.Label), append(budgetKeys, l)
			}
			l.Color, l.Width, l.Dashes = budgetColor, vg.Points(1.5), budgetDashes[k%len(budgetDashes)]
			p.Add(l)
		}
		f.grid[i/cols][i%cols] = p
	}
	for k, label := range labels {
		f.legend.Add("budget: "+label, budgetKeys[k])
	}
	return f, nil
}

// panelTitle names the panel's devnet and sample count, then its budgets:
// "tier3 (ci) · n=48" / "median ≤ 0.7s, every node ≤ 3s".
func panelTitle(p panel, unit string) string {
	var bs []string
	for _, b := range p.Budgets {
		bs = append(bs, fmt.Sprintf("%s ≤ %g%s", b.Label, b.Value, unit))
	}
	if len(bs) == 0 {
		bs = []string{"no budget checked"}
	}
	return fmt.Sprintf("%s · n=%d\n%s", p.Label, len(p.Values), strings.Join(bs, ", "))
}

// cdfLine is the step curve of the share of values at most x, from 0 to
// xmax; infinite values count in the total but never arrive.
func cdfLine(values []float64, xmax float64) (*plotter.Line, error) {
	pts := plotter.XYs{{X: 0, Y: 0}}
	y := 0.0
	for j, v := range values {
		if math.IsInf(v, 0) {
			break
		}
		y = float64(j+1) / float64(len(values))
		pts = append(pts, plotter.XY{X: v, Y: y})
	}
	pts = append(pts, plotter.XY{X: xmax, Y: y})
	l, err := plotter.NewLine(pts)
	if err != nil {
		return nil, err
	}
	l.StepStyle = plotter.PostStep
	l.Width = vg.Points(2)
	return l, nil
}

// save writes the figure as dir/stem.png and dir/stem.svg: the title over
// the panels, the panels in a grid with aligned data areas, the legend in
// the strip on the right.
func (f *panelFigure) save(dir, stem string) ([]string, error) {
	rows, cols := len(f.grid), len(f.grid[0])
	sty := plot.New().Title.TextStyle
	tilesWidth := max(vg.Length(cols)*panelWidth, plotWidth-legendWidth)
	title := wrapText(f.title, sty, tilesWidth-vg.Centimeter)
	header := sty.Height(title) + 3*vg.Millimeter
	tilesHeight := max(vg.Length(rows)*panelHeight, plotHeight-header)
	width, height := tilesWidth+legendWidth, tilesHeight+header
	files, err := writeCanvases(dir, stem, width, height, func(dc draw.Canvas) {
		dc.FillText(sty, vg.Point{X: tilesWidth / 2, Y: height - vg.Millimeter}, title)
		tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: 5 * vg.Millimeter, PadY: 4 * vg.Millimeter,
			PadLeft: vg.Millimeter, PadRight: vg.Millimeter, PadBottom: vg.Millimeter}
		canvases := plot.Align(f.grid, tiles, draw.Crop(dc, 0, -legendWidth, 0, -header))
		for j, row := range f.grid {
			for i, p := range row {
				if p != nil {
					p.Draw(canvases[j][i])
				}
			}
		}
		f.legend.Draw(draw.Crop(dc, width-legendWidth+vg.Millimeter, 0, 0, -header))
	})
	if err != nil {
		return nil, fmt.Errorf("write report: %w", err)
	}
	return files, nil
}

// writePlots draws the run's figures for which it has samples and returns
// the files written.
func writePlots(dir string, run Run) ([]string, error) {
	var files []string
	for _, c := range runPlots {
		ps := panels(run, c.kind)
		if len(ps) == 0 {
			continue
		}
		f, err := c.figure(run, ps)
		if err != nil {
			return nil, fmt.Errorf("write report: %w", err)
		}
		saved, err := f.save(dir, c.stem)
		if err != nil {
			return nil, err
		}
		files = append(files, saved...)
	}
	return files, nil
}
