package report

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Plot file stems, each written as .png and .svg.
const (
	PlotCompletionCDF = "completion-cdf"
	PlotCopiesHist    = "copies-per-node"
)

const (
	plotWidth  = 20 * vg.Centimeter
	plotHeight = 11 * vg.Centimeter
	// legendWidth is the strip right of the data area that holds the
	// legend, so that it never covers a curve or a bar.
	legendWidth = 5.5 * vg.Centimeter
	histBins    = 20
)

// figure is a plot and its legend, drawn side by side.
type figure struct {
	p      *plot.Plot
	legend plot.Legend
}

func newFigure(title string, run Run) *figure {
	nf := NewFigure(title, caption(run))
	return &figure{p: nf.Plot, legend: nf.Legend}
}

// caption names the run, backend, seeds and nodes the figure shows, so an
// image passed around on its own still says where it came from.
func caption(run Run) string {
	parts := []string{"run " + run.ID, run.Backend}
	var seeds, sizes []string
	for _, d := range run.Devnets {
		if d.Seed != 0 {
			seeds = appendOnce(seeds, fmt.Sprint(d.Seed))
		}
		if d.Nodes != 0 {
			sizes = appendOnce(sizes, fmt.Sprint(d.Nodes))
		}
	}
	sort.Strings(seeds)
	sort.Strings(sizes)
	if len(seeds) > 0 {
		parts = append(parts, "seed "+strings.Join(seeds, ", "))
	}
	if len(sizes) > 0 {
		parts = append(parts, strings.Join(sizes, ", ")+" nodes")
	}
	return strings.Join(parts, " · ")
}

func appendOnce(xs []string, x string) []string {
	for _, have := range xs {
		if have == x {
			return xs
		}
	}
	return append(xs, x)
}

// save writes the figure as dir/stem.png and dir/stem.svg.
func (f *figure) save(dir, stem string) ([]string, error) {
	files, err := saveFigure(f.p, f.legend, dir, stem)
	if err != nil {
		return nil, fmt.Errorf("write report: %w", err)
	}
	return files, nil
}

// Figure is a plot drawn in the report's layout: title and caption above,
// the legend in a strip right of the data area so it never covers a curve.
// Other packages (sweep) draw their figures with it so every segdiff
// figure looks alike.
type Figure struct {
	Plot   *plot.Plot
	Legend plot.Legend
}

// NewFigure starts a figure titled title with the caption below it (what
// the figure shows and where it came from) and a grid.
func NewFigure(title, caption string) *Figure {
	f := &Figure{Plot: plot.New(), Legend: plot.NewLegend()}
	f.Plot.Title.Text = title + "\n" + caption
	f.Plot.Add(plotter.NewGrid())
	f.Legend.Top, f.Legend.Left = true, true
	// A smaller legend font fits labels such as "segmented-batch,
	// withholder" in the strip.
	f.Legend.TextStyle.Font.Size = vg.Points(9)
	return f
}

// Save writes the figure as dir/stem.png and dir/stem.svg and returns the
// files.
func (f *Figure) Save(dir, stem string) ([]string, error) {
	return saveFigure(f.Plot, f.Legend, dir, stem)
}

func saveFigure(p *plot.Plot, legend plot.Legend, dir, stem string) ([]string, error) {
	var files []string
	for _, ext := range []string{"png", "svg"} {
		c, err := draw.NewFormattedCanvas(plotWidth, plotHeight, ext)
		if err != nil {
			return nil, fmt.Errorf("%s canvas: %w", ext, err)
		}
		dc := draw.New(c)
		// The title is centred over the data area: wrap it to that width so
		// a long caption (a grid file's path) does not run off the canvas.
		p.Title.Text = wrapText(p.Title.Text, p.Title.TextStyle, plotWidth-legendWidth-vg.Centimeter)
		p.Draw(draw.Crop(dc, 0, -legendWidth, 0, 0))
		legend.Draw(draw.Crop(dc, plotWidth-legendWidth+vg.Millimeter, 0, 0, -p.Title.TextStyle.Height(p.Title.Text)))
		name := filepath.Join(dir, stem+"."+ext)
		out, err := os.Create(name)
		if err != nil {
			return nil, err
		}
		_, werr := c.WriteTo(out)
		if cerr := out.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return nil, fmt.Errorf("save %s: %w", name, werr)
		}
		files = append(files, name)
	}
	return files, nil
}

// writePlots draws the plots for which run has samples and returns the
// files written.
func writePlots(dir string, run Run) ([]string, error) {
	var files []string
	if ds := byKind(run, KindCompletion); len(ds) > 0 {
		f, err := completionCDF(run, ds)
		if err != nil {
			return nil, err
		}
		saved, err := f.save(dir, PlotCompletionCDF)
		if err != nil {
			return nil, err
		}
		files = append(files, saved...)
	}
	if ds := byKind(run, KindCopies); len(ds) > 0 {
		f, err := copiesHistogram(run, ds)
		if err != nil {
			return nil, err
		}
		saved, err := f.save(dir, PlotCopiesHist)
		if err != nil {
			return nil, err
		}
		files = append(files, saved...)
	}
	return files, nil
}

func byKind(run Run, kind string) []*Distribution {
	var out []*Distribution
	for _, d := range run.Distributions {
		if d.Kind == kind && len(d.Samples) > 0 {
			out = append(out, d)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Mode < out[j].Mode })
	return out
}

func budgetsOf(run Run, kind string) []BudgetLine {
	var out []BudgetLine
	for _, b := range run.Budgets {
		if b.Kind == kind {
			out = append(out, b)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Value < out[j].Value })
	return out
}

// budgetColors are the dashed budget lines' colours, distinct from the
// data's palette.
var budgetColors = []color.Color{
	color.RGBA{R: 200, A: 255},
	color.RGBA{R: 120, G: 60, B: 160, A: 255},
	color.RGBA{R: 90, G: 90, B: 90, A: 255},
}

// addBudgetLines draws each budget as a dashed vertical line from 0 to
// ymax, labelled in the legend.
func (f *figure) addBudgetLines(bs []BudgetLine, ymax float64, format func(float64) string) error {
	for i, b := range bs {
		l, err := plotter.NewLine(plotter.XYs{{X: b.Value, Y: 0}, {X: b.Value, Y: ymax}})
		if err != nil {
			return fmt.Errorf("write report: budget line %s: %w", b.Label, err)
		}
		l.Color = budgetColors[i%len(budgetColors)]
		l.Width = vg.Points(1.5)
		l.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		f.p.Add(l)
		f.legend.Add(fmt.Sprintf("budget: %s %s", b.Label, format(b.Value)), l)
	}
	return nil
}

// completionCDF draws, per mode, the share of (node, warm slot) samples
// complete by t seconds after the reveal, with every completion budget as
// a dashed line.
func completionCDF(run Run, ds []*Distribution) (*figure, error) {
	f := newFigure("Payload completion from the builder's reveal", run)
	p := f.p
	p.X.Label.Text = "seconds after the reveal"
	p.Y.Label.Text = "share of nodes × warm slots complete"
	p.Y.Min, p.Y.Max = 0, 1
	budgets := budgetsOf(run, KindCompletion)
	xmax := 0.0
	for _, b := range budgets {
		xmax = math.Max(xmax, b.Value)
	}
	for i, d := range ds {
		vs := make([]float64, len(d.Samples))
		for j, s := range d.Samples {
			vs[j] = s.Value
		}
		sort.Float64s(vs)
		pts := make(plotter.XYs, 0, len(vs)+1)
		pts = append(pts, plotter.XY{X: math.Min(0, vs[0]), Y: 0})
		for j, v := range vs {
			pts = append(pts, plotter.XY{X: v, Y: float64(j+1) / float64(len(vs))})
		}
		xmax = math.Max(xmax, vs[len(vs)-1])
		l, err := plotter.NewLine(pts)
		if err != nil {
			return nil, fmt.Errorf("write report: completion CDF %s: %w", d.Mode, err)
		}
		l.StepStyle = plotter.PostStep
		l.Color = plotutil.Color(i)
		l.Width = vg.Points(2)
		p.Add(l)
		f.legend.Add(fmt.Sprintf("%s (n=%d)", d.Mode, len(vs)), l)
	}
	if err := f.addBudgetLines(budgets, 1, func(v float64) string { return fmt.Sprintf("%gs", v) }); err != nil {
		return nil, err
	}
	p.X.Min, p.X.Max = 0, xmax*1.05
	return f, nil
}

// copiesHistogram draws, per mode, how many nodes received a given mean
// number of payload copies per warm slot, with the copies budgets.
func copiesHistogram(run Run, ds []*Distribution) (*figure, error) {
	f := newFigure("Payload copies received per node", run)
	p := f.p
	p.X.Label.Text = "copies per warm slot, node mean: (data + control bytes) ÷ compressed size"
	p.Y.Label.Text = "nodes"
	p.Y.Tick.Marker = integerTicks{}
	budgets := budgetsOf(run, KindCopies)
	perNode := make([][]float64, len(ds))
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, d := range ds {
		sum, n := map[string]float64{}, map[string]int{}
		for _, s := range d.Samples {
			sum[s.Node] += s.Value
			n[s.Node]++
		}
		for node, total := range sum {
			m := total / float64(n[node])
			perNode[i] = append(perNode[i], m)
			lo, hi = math.Min(lo, m), math.Max(hi, m)
		}
	}
	lo, hi = math.Floor(lo*10)/10, math.Ceil(hi*10)/10
	if hi <= lo {
		hi = lo + 0.1
	}
	width := (hi - lo) / histBins
	tallest := 1.0
	for i, d := range ds {
		bins := make([]plotter.HistogramBin, histBins)
		for j := range bins {
			bins[j] = plotter.HistogramBin{Min: lo + float64(j)*width, Max: lo + float64(j+1)*width}
		}
		for _, v := range perNode[i] {
			j := min(int((v-lo)/width), histBins-1)
			bins[j].Weight++
		}
		for _, b := range bins {
			tallest = math.Max(tallest, b.Weight)
		}
		r, g, b, _ := plotutil.Color(i).RGBA()
		fill := color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 160}
		h := &plotter.Histogram{Bins: bins, Width: width, FillColor: fill,
			LineStyle: draw.LineStyle{Color: plotutil.Color(i), Width: vg.Points(1)}}
		p.Add(h)
		f.legend.Add(fmt.Sprintf("%s (%d nodes)", d.Mode, len(perNode[i])), h)
	}
	if err := f.addBudgetLines(budgets, tallest, func(v float64) string { return fmt.Sprintf("%g copies", v) }); err != nil {
		return nil, err
	}
	p.Y.Min, p.Y.Max = 0, math.Ceil(tallest*1.1)
	for _, b := range budgets {
		lo, hi = math.Min(lo, b.Value), math.Max(hi, b.Value)
	}
	p.X.Min, p.X.Max = lo-width, hi+width
	return f, nil
}

// integerTicks labels whole numbers only: the axis counts nodes.
type integerTicks struct{}

// Ticks returns about five labelled ticks at whole-number steps.
func (integerTicks) Ticks(lo, hi float64) []plot.Tick {
	step := math.Max(1, math.Ceil((hi-lo)/5))
	var ticks []plot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi+1e-9; v += step {
		ticks = append(ticks, plot.Tick{Value: v, Label: fmt.Sprintf("%.0f", v)})
	}
	return ticks
}

// wrapText breaks each line of s at spaces so that no line is wider
// than width in style.
func wrapText(s string, style text.Style, width vg.Length) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		words := strings.Fields(line)
		cur := ""
		for _, w := range words {
			next := w
			if cur != "" {
				next = cur + " " + w
			}
			if cur != "" && style.Width(next) > width {
				out = append(out, cur)
				next = w
			}
			cur = next
		}
		out = append(out, cur)
	}
	return strings.Join(out, "\n")
}
