package assertions

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/segdiff/segdiff/internal/stats"
)

// Summary condenses a set of slots (the warm ones, or the cold one) of one
// devnet's record with the same extraction the features' checks use:
// completion quantiles are nearest-rank over the pooled samples of every
// honest receiver in every slot, a stranded receiver counting as never;
// copies are per receiver and slot, by each definition. `segdiff sim`,
// sweeps and the docs' tables report these figures.
type Summary struct {
	// Slots is how many payloads the figures cover; Receivers how many
	// honest receivers each has.
	Slots     int `json:"slots"`
	Receivers int `json:"receivers"`
	// P50, P90, P99 and Max are completion from the reveal; -1 when the
	// quantile landed on a node that never completed (censored).
	P50 time.Duration `json:"p50_ns"`
	P90 time.Duration `json:"p90_ns"`
	P99 time.Duration `json:"p99_ns"`
	Max time.Duration `json:"max_ns"`
	// Window is the completion budget Within counts against (3 s), Within
	// the share of receiver-slots complete within it.
	Window time.Duration `json:"window_ns"`
	Within float64       `json:"within_window"`
	// Stranded counts receiver-slots that never completed.
	Stranded int `json:"stranded"`
	// Completion is every receiver-slot's completion from the reveal,
	// ascending, the nevers (-1) last: what a CDF draws.
	Completion []time.Duration `json:"completion_ns"`
	// ByNetworkCompletion and OverSlot are copies (data + control bytes ÷
	// the compressed payload) per receiver and slot by each definition
	// (CopiesDefinition); a definition the record does not carry (a client
	// has no network-completion bytes; a slot some node never completed has
	// none either) is NaN, printed "n/a". DataOverSlot is data bytes alone
	// over the slot, mean (the prototype's figure).
	ByNetworkCompletion CopyStats `json:"copies_by_network_completion"`
	OverSlot            CopyStats `json:"copies_over_slot"`
	DataOverSlot        Num       `json:"data_copies_over_slot_mean"`
	// PTCTimely counts slots whose PTC had more than half the votes, of
	// the slots the record has votes for (PTCSlots).
	PTCTimely int `json:"ptc_timely"`
	PTCSlots  int `json:"ptc_slots"`
}

// CopyStats are one definition's copies over receivers and slots.
type CopyStats struct {
	Mean   Num `json:"mean"`
	Median Num `json:"median"`
	// Samples counts the receiver-slots the figures cover.
	Samples int `json:"samples"`
}

// Num is a statistic that may be NaN (no samples) or +Inf (never); both are
// null in JSON.
type Num float64

// MarshalJSON writes NaN and ±Inf as null.
func (n Num) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(n)) || math.IsInf(float64(n), 0) {
		return []byte("null"), nil
	}
	return fmt.Appendf(nil, "%v", float64(n)), nil
}

// UnmarshalJSON reads null as NaN.
func (n *Num) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = Num(math.NaN())
		return nil
	}
	var f float64
	if _, err := fmt.Sscan(string(b), &f); err != nil {
		return fmt.Errorf("decode statistic %s: %w", b, err)
	}
	*n = Num(f)
	return nil
}

// Summarize condenses slots of n. Stranded receivers count as never; any
// other missing reading (a metrics gap) is an error, as it is for a check.
func Summarize(n Network, slots []uint64, window time.Duration) (Summary, error) {
	s := Summary{Slots: len(slots), Window: window, Receivers: len(n.Receivers())}
	done, err := Completion(n, slots)
	var miss *MissingReadings
	if err != nil && !errors.As(err, &miss) {
		return s, fmt.Errorf("summarize: %w", err)
	}
	times := values(done)
	if miss != nil {
		for _, m := range miss.Missing {
			if !m.Stranded {
				return s, fmt.Errorf("summarize: %w", miss)
			}
			times = append(times, stats.NeverCompleted)
			s.Stranded++
		}
	}
	q := func(p float64) time.Duration {
		v := stats.Quantile(times, p)
		if math.IsNaN(v) || stats.Censored(v) {
			return -1
		}
		return time.Duration(math.Round(v * 1e9))
	}
	s.P50, s.P90, s.P99, s.Max = q(0.5), q(0.9), q(0.99), q(1)
	sorted := slices.Clone(times)
	slices.Sort(sorted) // +Inf (never) last
	for _, v := range sorted {
		d := time.Duration(-1)
		if !stats.Censored(v) {
			d = time.Duration(math.Round(v * 1e9))
		}
		s.Completion = append(s.Completion, d)
	}
	s.Within = stats.ShareAtMost(times, window.Seconds())
	if s.OverSlot, err = copyStats(n, slots, CopiesOverSlot); err != nil {
		return s, err
	}
	if s.ByNetworkCompletion, err = copyStats(n, slots, CopiesByNetworkCompletion); err != nil {
		return s, err
	}
	s.DataOverSlot = Num(stats.Mean(dataCopies(n, slots)))
	for _, slot := range slots {
		if v, ok := n.PTC[slot]; ok {
			s.PTCSlots++
			if v.Timely() {
				s.PTCTimely++
			}
		}
	}
	return s, nil
}

// copyStats are def's copies over slots: every receiver-slot that carries
// them. Missing network-completion bytes (a slot some node never completed,
// a client that cannot know) leave the definition out, not an error.
func copyStats(n Network, slots []uint64, def CopiesDefinition) (CopyStats, error) {
	samples, err := Copies(n, slots, def)
	var miss *MissingReadings
	if err != nil && !(errors.As(err, &miss) && def == CopiesByNetworkCompletion) {
		return CopyStats{}, fmt.Errorf("summarize: %w", err)
	}
	vs := values(samples)
	return CopyStats{Mean: Num(stats.Mean(vs)), Median: Num(stats.Median(vs)), Samples: len(vs)}, nil
}

// dataCopies are data bytes alone ÷ the compressed payload, per receiver
// and slot over the slot.
func dataCopies(n Network, slots []uint64) []float64 {
	reveals := n.Reveals()
	var out []float64
	for _, node := range n.Receivers() {
		for _, slot := range slots {
			r, ok := reveals[slot]
			if !ok || !Receives(node, slot, reveals) {
				continue
			}
			b, _ := n.node(r.Builder)
			size, m := b.Count(SeriesPayloadSize, slot)
			if m != nil || size == 0 {
				continue
			}
			if data, m := node.Count(SeriesDataBytes, slot); m == nil || receivedNothing(node, SeriesDataBytes, slot, m) {
				out = append(out, float64(data)/float64(size))
			}
		}
	}
	return out
}
