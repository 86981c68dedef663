package report

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Plot file stems, each written as .png and .svg.
const (
	PlotCompletionCDF = "completion-cdf"
	PlotCopies        = "copies-per-node"
)

const (
	plotWidth  = 20 * vg.Centimeter
	plotHeight = 11 * vg.Centimeter
	// legendWidth is the strip right of the data area that holds the
	// legend, so that it never covers a curve or a bar.
	legendWidth = 5.5 * vg.Centimeter
)

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
	// The title is centred over the data area: wrap it to that width so a
	// long caption (a grid file's path) does not run off the canvas.
	p.Title.Text = wrapText(p.Title.Text, p.Title.TextStyle, plotWidth-legendWidth-vg.Centimeter)
	return writeCanvases(dir, stem, plotWidth, plotHeight, func(dc draw.Canvas) {
		p.Draw(draw.Crop(dc, 0, -legendWidth, 0, 0))
		legend.Draw(draw.Crop(dc, plotWidth-legendWidth+vg.Millimeter, 0, 0, -p.Title.TextStyle.Height(p.Title.Text)))
	})
}

// writeCanvases draws a width x height figure with paint into
// dir/stem.png and dir/stem.svg and returns the files.
func writeCanvases(dir, stem string, width, height vg.Length, paint func(draw.Canvas)) ([]string, error) {
	var files []string
	for _, ext := range []string{"png", "svg"} {
		c, err := draw.NewFormattedCanvas(width, height, ext)
		if err != nil {
			return nil, fmt.Errorf("%s canvas: %w", ext, err)
		}
		paint(draw.New(c))
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
