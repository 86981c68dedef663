package result

import (
	"fmt"
	"io"
	"math"
	"text/tabwriter"
	"time"

	"github.com/segdiff/segdiff/internal/stats"
)

// Label names the run a summary describes.
type Label struct {
	Mode  string `json:"mode"`
	Seed  int64  `json:"seed"`
	Nodes int    `json:"nodes"`
	// Window is the completion budget Within counts against (3 s).
	Window time.Duration `json:"window"`
}

// Summary condenses a set of payload slots (the warm ones, or the cold
// one) with package stats' convention: quantiles are nearest-rank over the
// pooled samples of every receiver in every slot, a node that never
// completed counting as never; copies are per receiver and slot.
type Summary struct {
	Label
	// Slots is how many payloads the figures cover.
	Slots int `json:"slots"`
	// P50, P90, P99 are completion from the reveal; -1 when the quantile
	// landed on a node that never completed (censored).
	P50 time.Duration `json:"p50_ns"`
	P90 time.Duration `json:"p90_ns"`
	P99 time.Duration `json:"p99_ns"`
	// Max is the slowest completion, -1 when some node never completed.
	Max time.Duration `json:"max_ns"`
	// Within is the share of completions within Window.
	Within float64 `json:"within_window"`
	// CopiesMean and CopiesMedian are payload copies received per receiver
	// and slot by network completion, (data + control) ÷ compressed size;
	// SlotCopiesMean counts the whole slot, late duplicates included (the
	// metrics contract's per-slot bytes); DataCopies counts data only over
	// the slot (the prototype's figure), mean.
	CopiesMean     float64 `json:"copies_mean"`
	CopiesMedian   float64 `json:"copies_median"`
	SlotCopiesMean float64 `json:"slot_copies_mean"`
	DataCopies     float64 `json:"data_copies_mean"`
	// PTCTimely counts slots whose PTC had more than half the votes.
	PTCTimely int `json:"ptc_timely"`
}

// Summarize condenses slots of a run labelled l.
func Summarize(l Label, slots []SlotResult) Summary {
	s := Summary{Label: l, Slots: len(slots)}
	var done, copies, slotCopies, data []float64
	for _, sr := range slots {
		done = append(done, sr.CompletionSeconds()...)
		copies = append(copies, sr.Copies()...)
		slotCopies = append(slotCopies, sr.SlotCopies()...)
		data = append(data, sr.DataCopies()...)
		if sr.PTC.Timely() {
			s.PTCTimely++
		}
	}
	q := func(p float64) time.Duration {
		if d, ok := durationOf(stats.Quantile(done, p)); ok {
			return d
		}
		return -1
	}
	s.P50, s.P90, s.P99, s.Max = q(0.5), q(0.9), q(0.99), q(1)
	s.Within = stats.ShareAtMost(done, l.Window.Seconds())
	s.CopiesMean = round(stats.Mean(copies), 4)
	s.CopiesMedian = round(stats.Median(copies), 4)
	s.SlotCopiesMean = round(stats.Mean(slotCopies), 4)
	s.DataCopies = round(stats.Mean(data), 4)
	return s
}

func round(v float64, digits int) float64 {
	if math.IsNaN(v) {
		return 0
	}
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}

// WriteTable writes one row per summary: completion quantiles pooled over
// receivers × slots (nearest-rank), the share within the window, copies
// per receiver and slot, and PTC-timely slots.
func WriteTable(w io.Writer, sums []Summary) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	window := 3 * time.Second
	if len(sums) > 0 {
		window = sums[0].Window
	}
	fmt.Fprintf(tw, "mode\tseed\tnodes\tslots\tp50\tp90\tp99\tmax\t≤%v\tcopies mean\tmedian\tslot copies\tdata copies\tPTC timely\t\n", window)
	dur := func(d time.Duration) string {
		if d < 0 {
			return "never"
		}
		return fmt.Sprintf("%.3fs", d.Seconds())
	}
	for _, s := range sums {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%.1f%%\t%.2f\t%.2f\t%.2f\t%.2f\t%d/%d\t\n",
			s.Mode, s.Seed, s.Nodes, s.Slots, dur(s.P50), dur(s.P90), dur(s.P99), dur(s.Max), 100*s.Within,
			s.CopiesMean, s.CopiesMedian, s.SlotCopiesMean, s.DataCopies, s.PTCTimely, s.Slots)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "completion from the reveal, nearest-rank over receivers × slots (\"never\": the quantile fell on a node that never completed); copies = (data + control bytes) ÷ compressed payload, per receiver and slot, received by the time the last node completed; slot copies: over the whole slot")
	return err
}
