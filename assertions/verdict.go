package assertions

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/segdiff/segdiff/internal/stats"
)

// Unit says how a verdict's values print.
type Unit string

// Units of verdict values.
const (
	UnitSeconds Unit = "s"      // durations; printed like time.Duration
	UnitCopies  Unit = "copies" // multiples of the compressed payload size
	UnitVotes   Unit = "votes"  // PTC payload_present votes
	UnitShare   Unit = "share"  // fraction 0..1, printed as a percentage
	UnitRatio   Unit = "ratio"  // a speed-up factor, printed as "3.2x"
	UnitEpochs  Unit = "epochs" // a number of epochs
	// UnitSlot marks offenders that are just slots (a missed block, a
	// self-built bid): their value is not printed.
	UnitSlot  Unit = "slot"
	UnitBytes Unit = "bytes" // sizes, printed as "4096 B"
)

// Format prints v in unit u.
func (u Unit) Format(v float64) string {
	switch u {
	case UnitSeconds:
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return fmt.Sprint(v)
		}
		d := time.Duration(math.Round(v * 1e9))
		// Millisecond resolution reads well and matches the contract's
		// timestamp precision; keep microseconds for sub-10ms values.
		if d >= 10*time.Millisecond || d <= -10*time.Millisecond {
			return d.Round(time.Millisecond).String()
		}
		return d.Round(time.Microsecond).String()
	case UnitCopies:
		return fmt.Sprintf("%.2f copies", v)
	case UnitVotes:
		return fmt.Sprintf("%.0f votes", v)
	case UnitShare:
		return fmt.Sprintf("%.1f%%", v*100)
	case UnitRatio:
		return fmt.Sprintf("%.2fx", v)
	case UnitEpochs:
		return fmt.Sprintf("%.0f epochs", v)
	case UnitSlot:
		return ""
	case UnitBytes:
		return fmt.Sprintf("%.0f B", v)
	}
	return fmt.Sprintf("%g", v)
}

// Op is how the measured value is compared with the budget.
type Op string

// Comparisons.
const (
	OpAtMost  Op = "<="
	OpAtLeast Op = ">="
	OpAbove   Op = ">"
)

func (o Op) holds(measured, budget float64) bool {
	switch o {
	case OpAtMost:
		return measured <= budget
	case OpAtLeast:
		return measured >= budget
	case OpAbove:
		return measured > budget
	}
	return false
}

// Offender is one node (or, for PTC verdicts, one slot) that contributed
// the worst values.
type Offender struct {
	Node  string  `json:"node,omitempty"`
	Link  string  `json:"link,omitempty"`
	Slot  uint64  `json:"slot"`
	Value float64 `json:"value"`
}

// Verdict is the outcome of one check.
type Verdict struct {
	// Check names what was measured ("median completion from reveal").
	Check    string  `json:"check"`
	Unit     Unit    `json:"unit"`
	Op       Op      `json:"op"`
	Measured float64 `json:"measured"`
	Budget   float64 `json:"budget"`
	Pass     bool    `json:"pass"`
	// Samples, Nodes and Slots count what the measurement covered.
	Samples int `json:"samples"`
	Nodes   int `json:"nodes"`
	Slots   int `json:"slots"`
	// Worst lists up to five offenders, worst first (ties by node id, slot).
	Worst []Offender `json:"worst,omitempty"`
	// WorstUnit is the unit of the offenders' values when it differs from
	// Unit (a share or a ratio of completion times lists nodes' seconds).
	WorstUnit Unit `json:"worst_unit,omitempty"`
	// Reason explains a failure that is not a comparison (no samples).
	Reason string `json:"reason,omitempty"`
	// Note adds what the report should show beside a passing verdict (the
	// stranded nodes of a network that had to fail, the gaps of the slots
	// a standard-API figure covers).
	Note string `json:"note,omitempty"`
	// Source names where the figures came from ("contract", "standard API
	// (times at receipt, ...)"); every verdict the suite records has one.
	Source string `json:"source,omitempty"`
}

// Err is nil when v passed, else an error naming the check, the measured
// value, the budget and the worst offenders.
func (v Verdict) Err() error {
	if v.Pass {
		return nil
	}
	return errors.New(v.String())
}

// String is a one-line summary: check, measured, budget, verdict, worst.
func (v Verdict) String() string {
	var b strings.Builder
	status := "ok"
	if !v.Pass {
		status = "FAILED"
	}
	if v.Reason != "" {
		fmt.Fprintf(&b, "%s: %s (budget %s %s)%s", v.Check, v.Reason, v.Op, v.Unit.Format(v.Budget), v.sourceTag())
		return b.String()
	}
	fmt.Fprintf(&b, "%s = %s, budget %s %s: %s (%d samples over %d nodes x %d slots)%s",
		v.Check, v.Unit.Format(v.Measured), v.Op, v.Unit.Format(v.Budget), status, v.Samples, v.Nodes, v.Slots, v.sourceTag())
	if len(v.Worst) > 0 {
		b.WriteString("; worst: ")
		b.WriteString(FormatOffenders(v.OffenderUnit(), v.Worst))
	}
	return b.String()
}

// sourceTag is " [source: ...]", or "" for a verdict without a source.
func (v Verdict) sourceTag() string {
	if v.Source == "" {
		return ""
	}
	return " [source: " + v.Source + "]"
}

// OffenderUnit is the unit of v.Worst's values.
func (v Verdict) OffenderUnit() Unit {
	if v.WorstUnit != "" {
		return v.WorstUnit
	}
	return v.Unit
}

// FormatOffenders prints offenders as "node (link) value at slot N, ...".
func FormatOffenders(u Unit, os []Offender) string {
	parts := make([]string, 0, len(os))
	for _, o := range os {
		if o.Node == "" {
			parts = append(parts, strings.TrimSpace(fmt.Sprintf("slot %d %s", o.Slot, u.Format(o.Value))))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s (%s) %s at slot %d", o.Node, o.Link, u.Format(o.Value), o.Slot))
	}
	return strings.Join(parts, ", ")
}

func values(samples []Sample) []float64 {
	out := make([]float64, len(samples))
	for i, s := range samples {
		out[i] = s.Value
	}
	return out
}

func coverage(v *Verdict, samples []Sample) {
	nodes, slots := map[string]bool{}, map[uint64]bool{}
	for _, s := range samples {
		nodes[s.Node], slots[s.Slot] = true, true
	}
	v.Samples, v.Nodes, v.Slots = len(samples), len(nodes), len(slots)
}

// worstNodes keeps each node's worst sample (highest when high is true) and
// returns up to maxWorst of them, worst first, ties by node id.
func worstNodes(samples []Sample, high bool) []Offender {
	best := map[string]Sample{}
	for _, s := range samples {
		cur, ok := best[s.Node]
		if !ok || (high && s.Value > cur.Value) || (!high && s.Value < cur.Value) {
			best[s.Node] = s
		}
	}
	out := make([]Offender, 0, len(best))
	for _, s := range best {
		out = append(out, Offender(s))
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Value != out[j].Value {
			return (out[i].Value > out[j].Value) == high
		}
		return out[i].Node < out[j].Node
	})
	if len(out) > maxWorst {
		out = out[:maxWorst]
	}
	return out
}

func noSamples(check string, u Unit, op Op, budget float64) Verdict {
	return Verdict{Check: check, Unit: u, Op: op, Budget: budget, Reason: "no samples (zero nodes or zero slots matched)"}
}

// AllAtMost checks that every sample is at most budget. Measured is the
// maximum; Worst holds the nodes with the highest values.
func AllAtMost(check string, u Unit, samples []Sample, budget float64) Verdict {
	if len(samples) == 0 {
		return noSamples(check, u, OpAtMost, budget)
	}
	v := Verdict{Check: check, Unit: u, Op: OpAtMost, Budget: budget, Measured: stats.Quantile(values(samples), 1)}
	coverage(&v, samples)
	v.Pass = OpAtMost.holds(v.Measured, budget)
	v.Worst = worstNodes(samples, true)
	return v
}

// QuantileAtMost checks that the nearest-rank q-quantile of the pooled
// samples is at most budget. Worst holds the nodes with the highest values.
func QuantileAtMost(check string, u Unit, samples []Sample, q, budget float64) Verdict {
	if len(samples) == 0 {
		return noSamples(check, u, OpAtMost, budget)
	}
	v := Verdict{Check: check, Unit: u, Op: OpAtMost, Budget: budget, Measured: stats.Quantile(values(samples), q)}
	coverage(&v, samples)
	v.Pass = OpAtMost.holds(v.Measured, budget)
	v.Worst = worstNodes(samples, true)
	return v
}

// ShareAtLeast checks that the share of samples at most within is at least
// minShare (0..1). Samples are durations in seconds; Worst holds the nodes
// with the highest values.
func ShareAtLeast(check string, samples []Sample, within, minShare float64) Verdict {
	if len(samples) == 0 {
		return noSamples(check, UnitShare, OpAtLeast, minShare)
	}
	done := 0
	for _, s := range samples {
		if s.Value <= within {
			done++
		}
	}
	v := Verdict{Check: check, Unit: UnitShare, Op: OpAtLeast, Budget: minShare, Measured: float64(done) / float64(len(samples)), WorstUnit: UnitSeconds}
	coverage(&v, samples)
	v.Pass = OpAtLeast.holds(v.Measured, minShare)
	v.Worst = worstNodes(samples, true)
	return v
}

// SpeedupAtLeast checks that the q-quantile of slow divided by that of fast
// is at least factor. Samples are durations in seconds; Worst holds the
// slowest nodes of fast.
func SpeedupAtLeast(check string, slow, fast []Sample, q, factor float64) Verdict {
	return quantileRatio(check, OpAtLeast, factor, UnitSeconds, slow, fast, fast, q, "fast")
}

// RatioAtMost checks that the q-quantile of num divided by that of den is
// at most ratio, for samples of one unit (copies: "tier4 moves at most 0.9
// times tier3's"). Worst holds the highest samples of num.
func RatioAtMost(check string, unit Unit, num, den []Sample, q, ratio float64) Verdict {
	return quantileRatio(check, OpAtMost, ratio, unit, num, den, num, q, "denominator")
}

// quantileRatio is the verdict on the q-quantile of num over that of den
// (samples of unit) against budget; coverage and Worst come from worst,
// one of the two; denName names den in the reason a zero quantile gives.
func quantileRatio(check string, op Op, budget float64, unit Unit, num, den, worst []Sample, q float64, denName string) Verdict {
	if len(num) == 0 || len(den) == 0 {
		return noSamples(check, UnitRatio, op, budget)
	}
	qn, qd := stats.Quantile(values(num), q), stats.Quantile(values(den), q)
	v := Verdict{Check: check, Unit: UnitRatio, Op: op, Budget: budget, WorstUnit: unit}
	coverage(&v, worst)
	if qd <= 0 {
		v.Reason = fmt.Sprintf("%s quantile is %s, cannot form a ratio", denName, unit.Format(qd))
		return v
	}
	v.Measured = qn / qd
	v.Pass = op.holds(v.Measured, budget)
	v.Worst = worstNodes(worst, true)
	return v
}

// NoneComplete checks that no receiver completed any of slots: the verdict
// of a network the design says must fail (segments without a code when the
// source omits some). completed holds the receivers' completions; stranded
// names every stranded receiver and slot with what it held. Measured is the
// share of (node, slot) pairs completed; Worst names the nodes that did.
func NoneComplete(check string, completed []Sample, stranded *MissingReadings, pairs int) Verdict {
	v := Verdict{Check: check, Unit: UnitShare, Op: OpAtMost, Budget: 0, WorstUnit: UnitSeconds}
	if pairs == 0 {
		v.Reason = "no receivers or no slots"
		return v
	}
	coverage(&v, completed)
	v.Measured = float64(len(completed)) / float64(pairs)
	v.Pass = len(completed) == 0
	v.Worst = worstNodes(completed, true)
	if stranded != nil && v.Pass {
		v.Note = stranded.Error()
	}
	return v
}
