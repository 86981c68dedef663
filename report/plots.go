package report

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Plot file stems, each written as .png and .svg.
const (
	PlotCompletionCDF = "completion-cdf"
	PlotCopiesHist    = "copies-per-node"
)

const (
	plotWidth  = 16 * vg.Centimeter
	plotHeight = 10 * vg.Centimeter
	histBins   = 20
)

// writePlots draws the plots for which run has samples and returns the
// files written.
func writePlots(dir string, run Run) ([]string, error) {
	var files []string
	save := func(p *plot.Plot, stem string) error {
		for _, ext := range []string{".png", ".svg"} {
			f := filepath.Join(dir, stem+ext)
			if err := p.Save(plotWidth, plotHeight, f); err != nil {
				return fmt.Errorf("write report: save %s: %w", f, err)
			}
			files = append(files, f)
		}
		return nil
	}
	if ds := byKind(run, KindCompletion); len(ds) > 0 {
		p, err := completionCDF(ds, run.CompletionBudget)
		if err != nil {
			return nil, err
		}
		if err := save(p, PlotCompletionCDF); err != nil {
			return nil, err
		}
	}
	if ds := byKind(run, KindCopies); len(ds) > 0 {
		p, err := copiesHistogram(ds)
		if err != nil {
			return nil, err
		}
		if err := save(p, PlotCopiesHist); err != nil {
			return nil, err
		}
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

// completionCDF draws, per mode, the share of (node, warm slot) samples
// complete by t seconds after the reveal, with the budget as a dashed line.
func completionCDF(ds []*Distribution, budget float64) (*plot.Plot, error) {
	if budget <= 0 {
		budget = 3
	}
	p := plot.New()
	p.Title.Text = "Payload completion from the builder's reveal"
	p.X.Label.Text = "seconds after reveal"
	p.Y.Label.Text = "share of nodes x warm slots complete"
	p.Y.Min, p.Y.Max = 0, 1
	p.Legend.Top = false
	p.Legend.Left = false
	p.Add(plotter.NewGrid())
	xmax := budget
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
		p.Legend.Add(fmt.Sprintf("%s (n=%d)", d.Mode, len(vs)), l)
	}
	b, err := plotter.NewLine(plotter.XYs{{X: budget, Y: 0}, {X: budget, Y: 1}})
	if err != nil {
		return nil, fmt.Errorf("write report: budget line: %w", err)
	}
	b.Color = color.RGBA{R: 200, A: 255}
	b.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
	p.Add(b)
	p.Legend.Add(fmt.Sprintf("budget %gs", budget), b)
	p.X.Min, p.X.Max = 0, xmax*1.05
	return p, nil
}

// copiesHistogram draws, per mode, how many nodes received a given mean
// number of payload copies per warm slot.
func copiesHistogram(ds []*Distribution) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "Payload copies received per node"
	p.X.Label.Text = "copies per warm slot, node mean ((data + control bytes) / compressed size)"
	p.Y.Label.Text = "nodes"
	p.Add(plotter.NewGrid())
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
	for i, d := range ds {
		bins := make([]plotter.HistogramBin, histBins)
		for j := range bins {
			bins[j] = plotter.HistogramBin{Min: lo + float64(j)*width, Max: lo + float64(j+1)*width}
		}
		for _, v := range perNode[i] {
			j := int((v - lo) / width)
			if j >= histBins {
				j = histBins - 1
			}
			bins[j].Weight++
		}
		r, g, b, _ := plotutil.Color(i).RGBA()
		fill := color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 160}
		h := &plotter.Histogram{Bins: bins, Width: width, FillColor: fill,
			LineStyle: draw.LineStyle{Color: plotutil.Color(i), Width: vg.Points(1)}}
		p.Add(h)
		p.Legend.Add(fmt.Sprintf("%s (%d nodes)", d.Mode, len(perNode[i])), h)
	}
	p.Legend.Top = true
	return p, nil
}
