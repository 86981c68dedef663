package sweep

import (
	"fmt"
	"image/color"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/segdiff/segdiff/assertions"
	"github.com/segdiff/segdiff/internal/report"
	"github.com/segdiff/segdiff/internal/stats"
)

// Plot file stems, each written as .png and .svg.
const (
	PlotLadder    = "ladder"
	PlotCDFPrefix = "cdf-"
	PlotSweep     = "sweep-p99"
	PlotAdversary = "adversary-p99"
)

// WritePlots draws the sweep's figures into dir and returns the files: the
// ladder (p99 against copies, log axes, a point per configuration with its
// seed range, a colour per column), completion CDFs per row configuration,
// and, when the grid varies one parameter, p50 and p99 against it.
func (s *Summary) WritePlots(dir string) ([]string, error) {
	var files []string
	save := func(f *report.Figure, stem string, err error) error {
		if err != nil {
			return err
		}
		if f == nil {
			return nil
		}
		saved, err := f.Save(dir, stem)
		if err != nil {
			return fmt.Errorf("write plots: %w", err)
		}
		files = append(files, saved...)
		return nil
	}
	f, err := s.ladder()
	if err := save(f, PlotLadder, err); err != nil {
		return nil, err
	}
	for _, row := range s.RowLabels {
		f, err := s.cdf(row)
		if err := save(f, PlotCDFPrefix+slug(row), err); err != nil {
			return nil, err
		}
	}
	if len(s.Varied) == 1 {
		f, err := s.oneParameter(s.Varied[0])
		if err := save(f, PlotSweep, err); err != nil {
			return nil, err
		}
	}
	f, err = s.adversary()
	if err := save(f, PlotAdversary, err); err != nil {
		return nil, err
	}
	return files, nil
}

// adversary draws the warm p99 against the share of adversarial nodes, one
// line per role and mode (mean over seeds, bars min–max), when the sweep
// varies a role's share: the stress list's "up to half the network". An
// honest configuration of the same mode is every line's point at share 0;
// configurations with other faults, or more than one role, are left out.
// nil when no configuration has an adversarial share.
func (s *Summary) adversary() (*report.Figure, error) {
	type line struct{ role, mode string }
	points := map[line][]*ConfigSummary{}
	honest := map[string]*ConfigSummary{}
	var order []line
	for _, c := range s.Configurations {
		if c.Faulted || len(c.Adversary) > 1 {
			continue
		}
		if len(c.Adversary) == 0 {
			honest[c.Mode] = c
			continue
		}
		for role := range c.Adversary {
			k := line{role, c.Mode}
			if _, ok := points[k]; !ok {
				order = append(order, k)
			}
			points[k] = append(points[k], c)
		}
	}
	if len(order) == 0 {
		return nil, nil
	}
	slices.SortFunc(order, func(a, b line) int { return strings.Compare(a.mode+" "+a.role, b.mode+" "+b.role) })
	censored := 0
	f := report.NewFigure("Tail completion against adversarial nodes",
		s.caption("warm slots, honest receivers; point: mean over seeds; bars: min–max; colour: mode; glyph and dashes: role"))
	p := f.Plot
	p.X.Label.Text = "share of non-builder nodes holding the role"
	p.Y.Label.Text = "p99 completion, seconds from the reveal"
	modes, roles := []string{}, []string{}
	for _, k := range order {
		if !slices.Contains(modes, k.mode) {
			modes = append(modes, k.mode)
		}
		if !slices.Contains(roles, k.role) {
			roles = append(roles, k.role)
		}
	}
	ymax := 0.0
	for _, k := range order {
		cs := points[k]
		if h, ok := honest[k.mode]; ok {
			cs = append([]*ConfigSummary{h}, cs...)
		}
		slices.SortFunc(cs, func(a, b *ConfigSummary) int { return cmpFloat(a.Adversary[k.role], b.Adversary[k.role]) })
		b := &seedBars{color: seriesColor(slices.Index(modes, k.mode), len(modes)), shape: plotutil.Shape(slices.Index(roles, k.role)), label: k.mode + ", " + k.role}
		var pts plotter.XYs
		for _, c := range cs {
			v := c.Warm.P99
			if v.Never > 0 {
				censored++
				continue
			}
			x := c.Adversary[k.role]
			b.add(x, x, x, float64(v.Mean), float64(v.Min), float64(v.Max))
			pts = append(pts, plotter.XY{X: x, Y: float64(v.Mean)})
			ymax = math.Max(ymax, float64(v.Max))
		}
		if err := b.draw(p); err != nil {
			return nil, err
		}
		if len(pts) > 1 {
			l, err := plotter.NewLine(pts)
			if err != nil {
				return nil, fmt.Errorf("write plots: %w", err)
			}
			l.Color = b.color
			l.Dashes = plotutil.Dashes(slices.Index(roles, k.role))
			p.Add(l)
		}
		legendSwatch(f, k.mode+", "+k.role, b.color, b.shape)
	}
	if censored > 0 {
		f.Legend.Add(fmt.Sprintf("not shown (p99 never reached): %d points", censored))
	}
	p.X.Min, p.X.Max = -0.02, 0.52
	p.Y.Min, p.Y.Max = 0, math.Max(ymax*1.1, 0.1)
	p.Y.Tick.Marker = niceTicks{}
	return f, nil
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// caption names the sweep, its grid, seeds and sizes, so a figure passed
// around on its own still says where it came from.
func (s *Summary) caption(extra string) string {
	var nodes []string
	for _, c := range s.Configurations {
		if n := strconv.Itoa(c.Nodes); !slices.Contains(nodes, n) {
			nodes = append(nodes, n)
		}
	}
	parts := []string{"sweep " + s.Sweep + " (" + s.GridFile + ")", fmt.Sprintf("%d configurations", len(s.Configurations)),
		"seeds " + seedList(s.Seeds), strings.Join(nodes, ", ") + " nodes"}
	// Two lines: the canvas is 20 cm wide and a caption must not run off it.
	out := strings.Join(parts, " · ")
	if extra != "" {
		out += "\n" + extra
	}
	return out
}

func (s *Summary) rowIndex(label string) int { return slices.Index(s.RowLabels, label) }

func columnName(s *Summary, label string) string {
	if s.Columns == "" {
		return label
	}
	return s.Columns + " " + label
}

// seedBars are points with their range over seeds as error bars.
type seedBars struct {
	xy         plotter.XYs
	xerr, yerr plotter.Errors
	hasX       bool
	color      color.Color
	shape      draw.GlyphDrawer
	label      string
}

func (b *seedBars) XY(i int) (float64, float64) { return b.xy[i].X, b.xy[i].Y }
func (b *seedBars) Len() int                    { return len(b.xy) }
func (b *seedBars) XError(i int) (float64, float64) {
	return b.xerr[i].Low, b.xerr[i].High
}
func (b *seedBars) YError(i int) (float64, float64) { return b.yerr[i].Low, b.yerr[i].High }

func (b *seedBars) add(x, xlo, xhi, y, ylo, yhi float64) {
	b.xy = append(b.xy, plotter.XY{X: x, Y: y})
	b.xerr = append(b.xerr, struct{ Low, High float64 }{x - xlo, xhi - x})
	b.yerr = append(b.yerr, struct{ Low, High float64 }{y - ylo, yhi - y})
}

// draw adds the points and their bars to p.
func (b *seedBars) draw(p *plot.Plot) error {
	if b.Len() == 0 {
		return nil
	}
	sc, err := plotter.NewScatter(b)
	if err != nil {
		return fmt.Errorf("write plots: %s: %w", b.label, err)
	}
	sc.GlyphStyle = draw.GlyphStyle{Color: b.color, Radius: vg.Points(4), Shape: b.shape}
	ye, err := plotter.NewYErrorBars(b)
	if err != nil {
		return fmt.Errorf("write plots: %s: %w", b.label, err)
	}
	ye.LineStyle.Color = b.color
	p.Add(ye)
	if b.hasX {
		xe, err := plotter.NewXErrorBars(b)
		if err != nil {
			return fmt.Errorf("write plots: %s: %w", b.label, err)
		}
		xe.LineStyle.Color = b.color
		p.Add(xe)
	}
	p.Add(sc)
	return nil
}

// ladder draws the warm p99 against the warm copies, one point per
// configuration with bars spanning its seeds, a colour per column and a
// glyph per row.
func (s *Summary) ladder() (*report.Figure, error) {
	var censored []string
	var xs, ys []float64
	for _, c := range s.Configurations {
		p99, cp := c.Warm.P99, c.Warm.Copies
		if p99.Never > 0 || float64(p99.Min) <= 0 || float64(cp.Min) <= 0 {
			censored = append(censored, c.Configuration)
			continue
		}
		xs = append(xs, float64(cp.Min), float64(cp.Max))
		ys = append(ys, float64(p99.Min), float64(p99.Max))
	}
	extra := "warm slots; point: mean over seeds; bars: min–max over seeds"
	if len(censored) > 0 {
		extra += fmt.Sprintf("; not shown (p99 never reached): %d configurations", len(censored))
	}
	f := report.NewFigure("Diffusion ladder: tail completion against bytes received", s.caption(extra))
	p := f.Plot
	p.X.Label.Text = "copies " + assertions.CopiesByNetworkCompletion.String() + ", mean per receiver × slot (log)"
	p.Y.Label.Text = "p99 completion, seconds from the reveal (log)"
	if len(xs) == 0 {
		return f, nil
	}
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = logTicks{}, logTicks{}
	p.X.Min, p.X.Max = logPad(xs)
	p.Y.Min, p.Y.Max = logPad(ys)
	// Each configuration's glyph is its row's shape, so a reader can tell
	// the rows apart within a colour; past the shapes there are, each point
	// carries its row's name as well.
	named := len(s.RowLabels) > len(plotutil.DefaultGlyphShapes)
	var names plotter.XYLabels
	for i, col := range s.ColumnLabels {
		colour := seriesColor(i, len(s.ColumnLabels))
		var pts []*seedBars
		for r := range s.RowLabels {
			pts = append(pts, &seedBars{color: colour, hasX: true, shape: plotutil.Shape(r), label: s.RowLabels[r]})
		}
		for _, c := range s.Configurations {
			if c.Column != col || slices.Contains(censored, c.Configuration) {
				continue
			}
			r := s.rowIndex(c.Row)
			p99, cp := c.Warm.P99, c.Warm.Copies
			pts[r].add(float64(cp.Mean), float64(cp.Min), float64(cp.Max), float64(p99.Mean), float64(p99.Min), float64(p99.Max))
			if named {
				names.XYs = append(names.XYs, plotter.XY{X: float64(cp.Mean), Y: float64(p99.Mean)})
				names.Labels = append(names.Labels, c.Row)
			}
		}
		for _, pt := range pts {
			if err := pt.draw(p); err != nil {
				return nil, err
			}
		}
		legendSwatch(f, columnName(s, col), colour, draw.CircleGlyph{})
	}
	if len(names.Labels) > 0 {
		l, err := plotter.NewLabels(names)
		if err != nil {
			return nil, fmt.Errorf("write plots: ladder labels: %w", err)
		}
		l.Offset = vg.Point{X: vg.Points(6), Y: vg.Points(-3)}
		p.Add(l)
	}
	// Named points need no shape legend (the shapes repeat past the set).
	if len(s.RowLabels) > 1 && !named {
		for r, label := range s.RowLabels {
			legendSwatch(f, label, color.Black, plotutil.Shape(r))
		}
	}
	return f, nil
}

// seriesColor is the colour of series i of n: the library's palette while
// it has n colours, else n hues spread evenly, so no two series share one.
func seriesColor(i, n int) color.Color {
	if n <= len(plotutil.DefaultColors) {
		return plotutil.Color(i)
	}
	return hueColor(float64(i) / float64(n))
}

// hueColor is the colour of hue h (0..1) at the saturation and value of
// the library's soft palette.
func hueColor(h float64) color.Color {
	const sat, val = 0.65, 0.85
	h6 := math.Mod(h, 1) * 6
	c := val * sat
	x := c * (1 - math.Abs(math.Mod(h6, 2)-1))
	var r, g, b float64
	switch int(h6) {
	case 0:
		r, g = c, x
	case 1:
		r, g = x, c
	case 2:
		g, b = c, x
	case 3:
		g, b = x, c
	case 4:
		r, b = x, c
	default:
		r, b = c, x
	}
	m := val - c
	to8 := func(v float64) uint8 { return uint8(math.Round((v + m) * 255)) }
	return color.RGBA{R: to8(r), G: to8(g), B: to8(b), A: 255}
}

// legendSwatch adds a legend entry drawn as one glyph.
func legendSwatch(f *report.Figure, label string, c color.Color, shape draw.GlyphDrawer) {
	sc, err := plotter.NewScatter(plotter.XYs{{}})
	if err != nil {
		return
	}
	sc.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(4), Shape: shape}
	f.Legend.Add(label, sc)
}

// cdf draws, for one row configuration, the share of receivers × slots
// (all seeds pooled) complete by t: a colour per column, warm solid, cold
// dashed, with the window as a dashed line.
func (s *Summary) cdf(row string) (*report.Figure, error) {
	title := "Payload completion from the builder's reveal"
	if row != "" {
		title += ": " + row
	}
	f := report.NewFigure(title, s.caption("seeds pooled · solid: warm slots, dotted: cold · a never-completed node keeps a curve below 1"))
	p := f.Plot
	p.X.Label.Text = "seconds after the reveal"
	p.Y.Label.Text = "share of receivers × slots complete"
	p.Y.Min, p.Y.Max = 0, 1
	xmax := 0.0
	for i, col := range s.ColumnLabels {
		c := s.Config(row, col)
		if c == nil {
			continue
		}
		for _, ph := range []struct {
			name   string
			vs     []float64
			dashed bool
		}{{"warm", c.warmCompletion, false}, {"cold", c.coldCompletion, true}} {
			pts, last := cdfPoints(ph.vs)
			if len(pts) == 0 {
				continue
			}
			xmax = math.Max(xmax, last)
			l, err := plotter.NewLine(pts)
			if err != nil {
				return nil, fmt.Errorf("write plots: completion CDF %s: %w", c.Configuration, err)
			}
			l.StepStyle = plotter.PostStep
			l.Color = seriesColor(i, len(s.ColumnLabels))
			l.Width = vg.Points(2)
			if ph.dashed {
				l.Width = vg.Points(1.2)
				l.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
			}
			p.Add(l)
			f.Legend.Add(fmt.Sprintf("%s, %s", col, ph.name), l)
		}
	}
	if w, err := parseWindow(s.Window); err == nil && w > 0 {
		l, err := plotter.NewLine(plotter.XYs{{X: w, Y: 0}, {X: w, Y: 1}})
		if err == nil {
			l.Color = color.RGBA{R: 200, A: 255}
			l.Width = vg.Points(1.5)
			l.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
			p.Add(l)
			f.Legend.Add("window "+s.Window, l)
			xmax = math.Max(xmax, w)
		}
	}
	p.X.Min, p.X.Max = 0, math.Max(xmax*1.05, 0.1)
	return f, nil
}

// cdfPoints is the empirical CDF of the finite values over all of vs (a
// never-completed sample counts in the denominator only) and the last
// finite value.
func cdfPoints(vs []float64) (plotter.XYs, float64) {
	fin := make([]float64, 0, len(vs))
	for _, v := range vs {
		if !stats.Censored(v) {
			fin = append(fin, v)
		}
	}
	if len(fin) == 0 {
		return nil, 0
	}
	slices.Sort(fin)
	pts := make(plotter.XYs, 0, len(fin)+1)
	pts = append(pts, plotter.XY{X: math.Min(0, fin[0]), Y: 0})
	for j, v := range fin {
		pts = append(pts, plotter.XY{X: v, Y: float64(j+1) / float64(len(vs))})
	}
	return pts, fin[len(fin)-1]
}

func parseWindow(s string) (float64, error) {
	d, err := time.ParseDuration(s)
	return d.Seconds(), err
}

// oneParameter draws the warm p50 and p99 (mean over seeds, bars min–max)
// against the one axis the grid varies: numeric values on a linear axis,
// others (network names, modes) as categories in grid order.
func (s *Summary) oneParameter(axis string) (*report.Figure, error) {
	f := report.NewFigure("Completion against "+axis, s.caption("warm slots; bars: min–max over seeds"))
	p := f.Plot
	p.X.Label.Text = axisLabel(axis)
	p.Y.Label.Text = "completion, seconds from the reveal"
	labels := make([]string, len(s.Configurations))
	numeric := axis != NetworkAxis
	for i, c := range s.Configurations {
		for _, co := range c.Coords {
			if co.Axis == axis {
				labels[i] = co.Label
			}
		}
		if _, err := strconv.ParseFloat(labels[i], 64); err != nil {
			numeric = false
		}
	}
	x := func(i int) float64 {
		if numeric {
			v, _ := strconv.ParseFloat(labels[i], 64)
			return v
		}
		return float64(i)
	}
	ymax := 0.0
	for k, m := range []Metric{MetricP50, MetricP99} {
		b := &seedBars{color: plotutil.Color(k), shape: plotutil.Shape(k), label: string(m)}
		var line plotter.XYs
		for i, c := range s.Configurations {
			v := c.Warm.Get(m)
			if v.Never > 0 {
				continue
			}
			b.add(x(i), x(i), x(i), float64(v.Mean), float64(v.Min), float64(v.Max))
			line = append(line, plotter.XY{X: x(i), Y: float64(v.Mean)})
			ymax = math.Max(ymax, float64(v.Max))
		}
		if err := b.draw(p); err != nil {
			return nil, err
		}
		if len(line) > 1 {
			l, err := plotter.NewLine(line)
			if err != nil {
				return nil, fmt.Errorf("write plots: %w", err)
			}
			l.Color = b.color
			p.Add(l)
		}
		legendSwatch(f, fmt.Sprintf("%s, mean over seeds", m), b.color, b.shape)
	}
	p.Y.Min, p.Y.Max = 0, math.Max(ymax*1.1, 0.1)
	p.Y.Tick.Marker = niceTicks{}
	if !numeric {
		p.X.Tick.Marker = categoryTicks(labels)
		p.X.Min, p.X.Max = -0.5, float64(len(labels))-0.5
	} else {
		lo, hi := x(0), x(0)
		for i := range labels {
			lo, hi = math.Min(lo, x(i)), math.Max(hi, x(i))
		}
		pad := math.Max((hi-lo)*0.05, 0.01)
		p.X.Min, p.X.Max = lo-pad, hi+pad
	}
	return f, nil
}

// axisLabel names an axis with its unit where the sim flag has one.
func axisLabel(axis string) string {
	units := map[string]string{
		"nodes": "nodes", "payload-size": "bytes", "segment-size": "bytes", "datacenter-share": "share of nodes, 0–1",
		"custom-up": "Mbps", "custom-down": "Mbps", "degree": "connections per node", "mesh-d": "peers",
		"push-width": "peers", "payloads": "slots",
	}
	if u, ok := units[axis]; ok {
		return axis + " (" + u + ")"
	}
	return axis
}

// categoryTicks labels positions 0..n-1 with the category names.
type categoryTicks []string

func (c categoryTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for i, l := range c {
		if float64(i) >= lo && float64(i) <= hi {
			out = append(out, plot.Tick{Value: float64(i), Label: l})
		}
	}
	return out
}

// niceTicks labels about six steps of 1, 2 or 5 times a power of ten, so
// a reader can read a value off the axis (gonum's default labels three).
type niceTicks struct{}

func (niceTicks) Ticks(lo, hi float64) []plot.Tick {
	if hi <= lo {
		return nil
	}
	raw := (hi - lo) / 6
	pow := math.Pow(10, math.Floor(math.Log10(raw)))
	step := pow
	for _, m := range []float64{1, 2, 5, 10} {
		if m*pow >= raw {
			step = m * pow
			break
		}
	}
	var out []plot.Tick
	for i := math.Ceil(lo/step - 1e-9); i*step <= hi+step*1e-9; i++ {
		v := i * step
		if i == 0 {
			v = 0 // not -0
		}
		out = append(out, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', 4, 64)})
	}
	return out
}

// logTicks labels 1, 2 and 5 times each power of ten in range (every
// integer multiple when fewer than three would show), so an axis spanning
// less than a decade still has labels.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if lo <= 0 || hi <= lo {
		return nil
	}
	collect := func(mults []float64) []plot.Tick {
		var out []plot.Tick
		for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
			for _, m := range mults {
				v := m * math.Pow(10, e)
				if v >= lo*(1-1e-9) && v <= hi*(1+1e-9) {
					out = append(out, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', 3, 64)})
				}
			}
		}
		return out
	}
	if t := collect([]float64{1, 2, 5}); len(t) >= 3 {
		return t
	}
	t := collect([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9})
	if len(t) >= 3 {
		return t
	}
	return collect([]float64{1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 7, 8, 9})
}

// logPad widens [min, max] of xs by a tenth on a log axis.
func logPad(xs []float64) (float64, float64) {
	lo, hi := slices.Min(xs), slices.Max(xs)
	if hi <= lo {
		return lo / 1.5, hi * 1.5
	}
	return lo / 1.1, hi * 1.1
}

var slugRE = regexp.MustCompile(`[^a-z0-9.]+`)

// slug turns a row label into a file name part: "whole · 1048576" →
// "whole-1048576".
func slug(s string) string {
	out := strings.Trim(slugRE.ReplaceAllString(strings.ToLower(s), "-"), "-")
	if out == "" {
		return "all"
	}
	return out
}
