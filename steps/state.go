package steps

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/segdiff/segdiff/assertions"
	"github.com/segdiff/segdiff/internal/beacon"
	"github.com/segdiff/segdiff/internal/devnet"
	"github.com/segdiff/segdiff/internal/poll"
	"github.com/segdiff/segdiff/internal/report"
	"github.com/segdiff/segdiff/metrics"
)

type scenarioKey struct{}

// scenario is one scenario's state: the devnets it uses, what was read from
// them and its report record.
type scenario struct {
	suite   *Suite
	obs     []*observation
	rec     report.Scenario
	skipped string
}

// observation is one devnet as a scenario sees it.
type observation struct {
	cfg   devnet.Config
	d     devnet.Devnet
	mode  string
	nodes []devnet.Node
	// net is the record the checks use: the contract's when every node
	// exports it, else the standard source's when the devnet has one
	// (chooseSource); contract and standard are both records, standard
	// nil with standardErr saying why when there is none.
	net         assertions.Network
	contract    assertions.Network
	standard    *assertions.Network
	standardErr error
	// patched holds the nodes that export the contract (a mixed devnet's
	// two populations).
	patched map[string]bool
	slots   []uint64 // the warm slots the checks use
}

func state(ctx context.Context) (*scenario, error) {
	st, ok := ctx.Value(scenarioKey{}).(*scenario)
	if !ok {
		return nil, errors.New("no scenario state in context (InitializeScenario not registered?)")
	}
	return st, nil
}

// use opens (or reuses) the devnet for cfg and adds it to the scenario.
func (st *scenario) use(cfg devnet.Config) error {
	d, err := st.suite.open(cfg)
	if err != nil {
		return err
	}
	st.obs = append(st.obs, &observation{cfg: cfg, d: d, mode: string(cfg.Mode)})
	st.rec.Devnets = append(st.rec.Devnets, st.suite.cfg.Backend+": "+cfg.String())
	return nil
}

// only returns the scenario's single devnet.
func (st *scenario) only() (*observation, error) {
	if len(st.obs) != 1 {
		return nil, fmt.Errorf("step needs exactly one devnet, the scenario opened %d", len(st.obs))
	}
	return st.obs[0], st.obs[0].ready()
}

// byMode returns the scenario's devnet running mode.
func (st *scenario) byMode(mode string) (*observation, error) {
	for _, o := range st.obs {
		if o.mode == mode {
			return o, o.ready()
		}
	}
	return nil, fmt.Errorf("scenario opened no %s devnet", mode)
}

func (o *observation) ready() error {
	if len(o.slots) == 0 {
		return fmt.Errorf("devnet (%s) not observed yet: a \"When ... has revealed N warm payloads\" step must come first", o.cfg)
	}
	return nil
}

// observe waits until every devnet of the scenario has n settled warm
// slots, then keeps the newest n of them and the readings they come from.
func (st *scenario) observe(ctx context.Context, n int) error {
	if len(st.obs) == 0 {
		return errors.New("no devnet selected: a \"Given a ... devnet\" step must come first")
	}
	for _, o := range st.obs {
		if err := st.suite.observe(ctx, o, n); err != nil {
			return err
		}
	}
	return nil
}

func (s *Suite) observe(ctx context.Context, o *observation, n int) error {
	nodes, err := o.d.Nodes(ctx)
	if err != nil {
		return fmt.Errorf("list nodes of devnet (%s): %w", o.cfg, err)
	}
	if len(nodes) == 0 {
		return fmt.Errorf("devnet (%s) has no nodes", o.cfg)
	}
	timeout := s.cfg.WaitTimeout
	if timeout <= 0 {
		timing, err := o.d.Timing(ctx)
		if err != nil {
			return fmt.Errorf("read timing of devnet (%s): %w", o.cfg, err)
		}
		timeout = time.Duration(n+3)*timing.SlotDuration + 2*time.Minute
	}
	return poll.Until(ctx, time.Now().Add(timeout), s.cfg.PollInterval, func(ctx context.Context) error {
		snaps, err := s.cfg.Reader.Read(ctx, o.d, nodes)
		if err != nil {
			return poll.Stop(fmt.Errorf("read devnet (%s): %w", o.cfg, err))
		}
		if err := o.read(ctx, nodes, snaps); err != nil {
			return poll.Stop(fmt.Errorf("read devnet (%s): %w", o.cfg, err))
		}
		settled := settledWarm(o.net)
		if f, ok := o.d.(devnet.Finished); ok && f.Finished() {
			settled, _ = assertions.WarmSlots(o.net) // every slot is final
		}
		if len(settled) >= n {
			// The newest: a long-running devnet deletes its oldest slots'
			// series (the contract keeps the last 64), possibly mid-read.
			o.slots = settled[len(settled)-n:]
			s.reportGaps(o)
			return nil
		}
		return fmt.Errorf("devnet (%s): %d of %d warm slots settled (%v), the checks need %d; waiting up to %s (SEGDIFF_WAIT_TIMEOUT)",
			o.cfg, len(settled), n, settled, n, timeout)
	})
}

// read builds o's records from the contract snapshots and, when the devnet
// has a standard source, its readings, and chooses the record the checks
// use.
func (o *observation) read(ctx context.Context, nodes []devnet.Node, snaps map[string]*metrics.Snapshot) error {
	var err error
	if o.contract, err = assertions.FromSnapshots(nodes, snaps); err != nil {
		return err
	}
	o.nodes = nodes
	o.mode = modeOf(nodes, snaps, string(o.cfg.Mode))
	o.patched = map[string]bool{}
	for _, n := range nodes {
		if s := snaps[n.ID]; s != nil && s.Info.Present {
			o.patched[n.ID] = true
		}
	}
	o.standard, o.standardErr = nil, errors.New("the devnet has no standard source (the embedded devnet runs no beacon API)")
	if std, ok := o.d.(devnet.Standard); ok {
		var ss map[string]*metrics.Snapshot
		if ss, o.standardErr = std.StandardSnapshots(ctx, nodes); o.standardErr == nil {
			n, err := assertions.FromSnapshots(nodes, ss)
			if err != nil {
				return err
			}
			o.standard = &n
		}
	}
	o.net = o.contract
	if len(o.patched) < len(nodes) && o.standard != nil {
		o.net = *o.standard // a node without the contract: one source for all
	}
	return nil
}

// reportGaps prints, once each, the gaps of the devnet's standard record
// so far, measured slots or not: a slot the source could not watch whole
// is never passed over silently (a verdict over one also notes it).
func (s *Suite) reportGaps(o *observation) {
	if o.standard == nil {
		return
	}
	for _, n := range o.standard.Nodes {
		for _, slot := range slices.Sorted(maps.Keys(n.Gaps)) {
			line := fmt.Sprintf("segdiff: standard API gap: node %s slot %d: %s", n.ID, slot, n.Gaps[slot])
			s.mu.Lock()
			if s.gapsSeen == nil {
				s.gapsSeen = map[string]bool{}
			}
			seen := s.gapsSeen[o.cfg.String()+line]
			s.gapsSeen[o.cfg.String()+line] = true
			s.mu.Unlock()
			if !seen {
				fmt.Fprintln(s.cfg.Log, line)
			}
		}
	}
}

// settledWarm returns the warm slots whose outcome can no longer change: a
// later slot was revealed, or every receiving node has completed it. On
// the standard source only the first holds: a slot's bytes are read at the
// next slot's start, which comes before the next reveal but may come after
// the last availability.
func settledWarm(net assertions.Network) []uint64 {
	warm, err := assertions.WarmSlots(net)
	if err != nil {
		return nil
	}
	reveals := net.Reveals()
	var latest uint64
	for s := range reveals {
		latest = max(latest, s)
	}
	var out []uint64
	for _, slot := range warm {
		if slot < latest || net.Origin != metrics.OriginStandardAPI && allCompleted(net, slot) {
			out = append(out, slot)
		}
	}
	return out
}

func allCompleted(net assertions.Network, slot uint64) bool {
	reveals := net.Reveals()
	for _, n := range net.Receivers() {
		if !assertions.Receives(n, slot, reveals) {
			continue
		}
		if _, miss := n.Time(assertions.SeriesCompleted, slot); miss != nil {
			return false
		}
	}
	return true
}

// record adds v to the scenario's report and returns its error, naming
// where its budgets came from; overridden budgets are noted in the report.
func (st *scenario) record(v assertions.Verdict, budgets ...budgetValue) error {
	if v.Source == "" {
		v.Source = st.source()
	}
	if note := st.gapNote(); note != "" && v.Note == "" {
		v.Note = note
	}
	st.rec.Verdicts = append(st.rec.Verdicts, v)
	if strings.HasPrefix(v.Source, string(metrics.OriginStandardAPI)) {
		// Step output: the figure with its source and bias, passing or not.
		fmt.Fprintf(st.suite.cfg.Log, "segdiff: %s\n", v)
	}
	var sources []string
	for _, b := range budgets {
		if !slices.Contains(sources, b.source) {
			sources = append(sources, b.source)
		}
		if b.override != "" && !slices.Contains(st.rec.Overrides, b.override) {
			st.rec.Overrides = append(st.rec.Overrides, b.override)
		}
	}
	if err := v.Err(); err != nil {
		if len(sources) == 0 {
			return err
		}
		return fmt.Errorf("%w (budget from %s)", err, strings.Join(sources, " and "))
	}
	return nil
}

// fail records an extraction error (missing series, no nodes) as a failed
// verdict of check and returns it, naming the source.
func (st *scenario) fail(check string, u assertions.Unit, op assertions.Op, budget float64, err error) error {
	src := st.source()
	st.rec.Verdicts = append(st.rec.Verdicts, assertions.Verdict{Check: check, Unit: u, Op: op, Budget: budget, Reason: err.Error(), Source: src})
	if src == "" {
		return fmt.Errorf("%s: %w", check, err)
	}
	return fmt.Errorf("%s [source: %s]: %w", check, src, err)
}

// SourceBeaconReads is the source of figures read from a beacon node's
// standard API endpoints (no event times, no receipt bias).
const SourceBeaconReads = "standard API reads"

// SourceLabel names a record's origin in verdicts and the report: the
// standard source's times are taken where the suite receives an event,
// and the label says what that adds.
func SourceLabel(o metrics.Origin) string {
	if o == metrics.OriginStandardAPI {
		return string(metrics.OriginStandardAPI) + ", " + beacon.ReceiptBias
	}
	return o.String()
}

// source labels the records the scenario's checks read ("" before any
// devnet was observed).
func (st *scenario) source() string {
	var out []string
	for _, o := range st.obs {
		if len(o.slots) == 0 {
			continue
		}
		if l := SourceLabel(o.net.Origin); !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return strings.Join(out, " + ")
}

// gapNote lists the gaps of the measured slots of the scenario's
// standard-source records.
func (st *scenario) gapNote() string {
	var out []string
	for _, o := range st.obs {
		if o.net.Origin == metrics.OriginStandardAPI {
			if n := assertions.GapNote(o.net, o.slots); n != "" {
				out = append(out, n)
			}
		}
	}
	return strings.Join(out, "; ")
}

// samples records samples of kind for o's devnet in the run's distributions.
func (st *scenario) samples(kind string, o *observation, samples []assertions.Sample) {
	st.suite.mu.Lock()
	defer st.suite.mu.Unlock()
	st.suite.run.AddSamples(kind, o.cfg.String(), o.mode, samples)
}

// diagnose prints, on failure only, where each devnet's evidence lives.
func (st *scenario) diagnose() {
	w := st.suite.cfg.Log
	for _, o := range st.obs {
		var urls []string
		for i, n := range o.nodes {
			if i == 3 {
				urls = append(urls, fmt.Sprintf("... %d more", len(o.nodes)-i))
				break
			}
			urls = append(urls, n.ID+"="+n.MetricsURL)
		}
		fmt.Fprintf(w, "[diagnostics/%s] scenario %q devnet (%s): mode %s, %d nodes, warm slots %v, prometheus %q, metrics %s\n",
			o.d.Backend(), st.rec.Name, o.cfg, o.mode, len(o.nodes), o.slots, o.d.PrometheusURL(), strings.Join(urls, " "))
	}
}
