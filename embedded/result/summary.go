package embedded

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"
)

// Summary condenses a Result's warm payloads: the median across warm slots
// of each slot's statistic, as the study reports the median across seeds.
type Summary struct {
	Mode  string `json:"mode"`
	Seed  int64  `json:"seed"`
	Nodes int    `json:"nodes"`
	// WarmSlots is how many payloads the figures cover.
	WarmSlots int `json:"warm_slots"`
	// P50, P90, P99 are completion from reveal over receivers; a censored
	// quantile (some node never completed) is reported as -1.
	P50 time.Duration `json:"p50_ns"`
	P90 time.Duration `json:"p90_ns"`
	P99 time.Duration `json:"p99_ns"`
	// Within is the share of receivers complete within the window (3 s).
	Within float64 `json:"within_window"`
	// Copies is (data + control) ÷ compressed size, mean per node;
	// DataCopies counts data only (the prototype's figure).
	Copies     float64 `json:"copies_mean"`
	DataCopies float64 `json:"data_copies_mean"`
	// PTCTimely counts warm slots whose PTC had more than half the votes.
	PTCTimely int `json:"ptc_timely"`
}

// Summarize returns the warm-payload summary of r.
func Summarize(r *Result) Summary {
	warm := r.Warm()
	s := Summary{Mode: string(r.Config.Mode), Seed: r.Config.Seed, Nodes: r.Config.Nodes, WarmSlots: len(warm)}
	var p50, p90, p99, within, copies, data []float64
	q := func(sr SlotResult, p float64) float64 {
		d, ok := sr.Quantile(p)
		if !ok {
			return -1
		}
		return float64(d)
	}
	for _, sr := range warm {
		p50 = append(p50, q(sr, 0.5))
		p90 = append(p90, q(sr, 0.9))
		p99 = append(p99, q(sr, 0.99))
		within = append(within, sr.Within(r.Config.Window))
		mean, _ := sr.Copies()
		copies = append(copies, mean)
		data = append(data, sr.DataCopies())
		if sr.PTC.Timely() {
			s.PTCTimely++
		}
	}
	s.P50 = time.Duration(medianCensored(p50))
	s.P90 = time.Duration(medianCensored(p90))
	s.P99 = time.Duration(medianCensored(p99))
	s.Within = median(within)
	s.Copies = median(copies)
	s.DataCopies = median(data)
	return s
}

// median of xs (0 for none).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	ys := slices.Clone(xs)
	slices.Sort(ys)
	if len(ys)%2 == 1 {
		return ys[len(ys)/2]
	}
	return (ys[len(ys)/2-1] + ys[len(ys)/2]) / 2
}

// medianCensored treats −1 (censored) as +∞; it returns −1 when the median
// itself is censored.
func medianCensored(xs []float64) float64 {
	ys := slices.Clone(xs)
	for i, y := range ys {
		if y < 0 {
			ys[i] = float64(1 << 62)
		}
	}
	m := median(ys)
	if m >= float64(1<<61) {
		return -1
	}
	return m
}

// WriteSummaryTable writes one row per summary.
func WriteSummaryTable(w io.Writer, sums []Summary, window time.Duration) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "mode\tseed\tnodes\twarm\tp50\tp90\tp99\t≤%v\tcopies(mean)\tdata copies\tPTC timely\t\n", window)
	dur := func(d time.Duration) string {
		if d < 0 {
			return "cens"
		}
		return fmt.Sprintf("%.3fs", d.Seconds())
	}
	for _, s := range sums {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\t%s\t%.1f%%\t%.2f\t%.2f\t%d/%d\t\n",
			s.Mode, s.Seed, s.Nodes, s.WarmSlots, dur(s.P50), dur(s.P90), dur(s.P99), 100*s.Within, s.Copies, s.DataCopies, s.PTCTimely, s.WarmSlots)
	}
	return tw.Flush()
}
