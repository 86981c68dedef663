// Package watch is the standard measurement source: what an unpatched
// glamsterdam client already tells about a payload's diffusion, held for a
// whole run of the suite. For every node it holds the beacon API event
// stream (/eth/v1/events: block_gossip, block, execution_payload_gossip,
// execution_payload_available), subscribed at Start, before the first
// measured slot, and reconnected whenever it drops; where the node exports
// a per-topic byte counter (metrics.TopicBytesSeries) it reads it at every
// slot boundary through the scrape path; and it reads each revealed
// payload's size from the envelope endpoint.
//
// Snapshots turns what it holds into the same typed record the metrics
// contract feeds (metrics.Snapshot, origin metrics.OriginStandardAPI;
// metrics.StandardReadings says what goes where), so the assertions judge
// either source with one definition per quantity. Times are taken where
// the suite receives an event (beacon.ReceiptBiasMedian). A slot the
// source could not watch whole (a stream down for part of it, a counter
// read that failed or came back late, an undecodable event) is listed in
// the snapshot's Gaps with why, never dropped silently.
//
// A Watch is safe for concurrent use.
package watch

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/segdiff/segdiff/internal/beacon"
	"github.com/segdiff/segdiff/internal/devnet"
	"github.com/segdiff/segdiff/internal/scrape"
	"github.com/segdiff/segdiff/metrics"
)

// Sizer reads a revealed payload's size (beacon.Client does).
type Sizer interface {
	PayloadSize(ctx context.Context, slot uint64) (beacon.PayloadSize, error)
}

// Proposers reads which validator proposed a slot's block (beacon.Client
// does).
type Proposers interface {
	Proposer(ctx context.Context, slot uint64) (uint64, error)
}

// Option configures Start.
type Option func(*parameters)

type parameters struct {
	now       func() time.Time
	backoff   [2]time.Duration
	settle    time.Duration
	sizer     Sizer
	proposers Proposers
	sizeRetry time.Duration
}

// WithStreamBackoff sets the reconnection wait after a drop and its cap
// (default 250 ms doubling to 2 s).
func WithStreamBackoff(initial, maxWait time.Duration) Option {
	return func(p *parameters) { p.backoff = [2]time.Duration{initial, maxWait} }
}

// WithSettle bounds how long Start waits for every stream's first
// connection attempt before it fixes the first measured slot (default 5 s).
func WithSettle(d time.Duration) Option { return func(p *parameters) { p.settle = d } }

// WithSizer sets where payload sizes are read (default: none, and every
// payload size is a missing reading).
func WithSizer(s Sizer) Option { return func(p *parameters) { p.sizer = s } }

// WithProposers sets where slots' proposers are read: on a network without
// a builder node, each slot's payload is built by its proposer, and the
// reveal goes to the node that holds the proposer's validator (default:
// none, and such a network has no reveals).
func WithProposers(p Proposers) Option { return func(p2 *parameters) { p2.proposers = p } }

// Watch is a running standard source; see the package doc.
type Watch struct {
	p      parameters
	timing devnet.Timing
	first  uint64
	nodes  []*node // sorted by id
	cancel context.CancelFunc
	wg     sync.WaitGroup

	sizeMu    sync.Mutex
	sizes     map[uint64]beacon.PayloadSize
	tried     map[uint64]time.Time // failed size reads, retried after sizeRetry
	proposer  map[uint64]uint64    // proposer index by slot
	proposeAt map[uint64]time.Time // failed proposer reads, retried after sizeRetry
}

// node is one node's standard readings.
type node struct {
	id, client string
	builder    bool

	mu      sync.Mutex
	events  map[uint64]map[string]time.Time // slot → topic → first receipt
	down    []outage                        // closed and open outages, in order
	bad     map[uint64][]string             // undecodable events by slot
	counter map[uint64]counterRead          // per-topic counter at each slot's start
}

// outage is a time the node's stream was not connected; an open one has a
// zero To.
type outage struct {
	From, To time.Time
	Why      string
}

type counterRead struct {
	bytes   uint64
	present bool // the exposition had metrics.TopicBytesSeries
	// recvMs and recvN are metrics.ReceiveBlockSeries's sum and count,
	// recvPresent whether the exposition had it.
	recvMs      float64
	recvN       uint64
	recvPresent bool
	err         error
	// late is how long after the slot boundary the read came back.
	late time.Duration
}

// lateRead is how long after a slot boundary a counter read may come back
// and still stand for the boundary: an eighth of a slot (1.5 s of 12 s),
// before the new slot's payload, which follows its block, can have
// arrived. A later read may hold bytes of the new slot's payload (on a
// loaded machine a read 740 ms into a 1.5 s fake slot counted the next
// payload's bytes in the slot before), so the slots it bounds are gaps.
func (w *Watch) lateRead() time.Duration { return w.timing.SlotDuration / 8 }

// readLead is how long before a slot boundary its read is sent: a twelfth
// of a slot (1 s of 12 s). On a devnet that loads its machine every node is
// busiest just after a slot starts (the proposal, then the block everywhere):
// reads sent at the boundary came back 1.5-1.6 s late on six Prysm nodes
// on 2 cores, so a boundary's snapshot is asked for while the nodes are
// still idle. What arrives in that second (the previous payload's late
// duplicates) counts in the next slot; the new slot's block and payload
// cannot have arrived before the boundary.
func (w *Watch) readLead() time.Duration { return w.timing.SlotDuration / 12 }

// Start subscribes to every node's event stream (a node without a beacon
// API is watched as a stream that never connects) and starts reading the
// per-topic counters at slot boundaries. It waits (WithSettle) until every
// stream has connected or failed once, then fixes the first measured slot:
// the first slot that starts after that. Close stops everything.
func Start(ctx context.Context, nodes []devnet.Node, timing devnet.Timing, opts ...Option) (*Watch, error) {
	if len(nodes) == 0 {
		return nil, errors.New("watch: no nodes")
	}
	if timing.SlotDuration <= 0 || timing.Genesis.IsZero() {
		return nil, fmt.Errorf("watch: slot clock %+v has no genesis or slot duration", timing)
	}
	p := parameters{now: time.Now, backoff: [2]time.Duration{250 * time.Millisecond, 2 * time.Second}, settle: 5 * time.Second, sizeRetry: time.Second}
	for _, o := range opts {
		o(&p)
	}
	life, cancel := context.WithCancel(context.Background())
	w := &Watch{p: p, timing: timing, cancel: cancel, sizes: map[uint64]beacon.PayloadSize{}, tried: map[uint64]time.Time{},
		proposer: map[uint64]uint64{}, proposeAt: map[uint64]time.Time{}}
	sorted := append([]devnet.Node(nil), nodes...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })
	connected := make(chan struct{}, len(sorted))
	for _, n := range sorted {
		nw := &node{id: n.ID, client: n.Client, builder: n.HasRole(devnet.RoleBuilder), events: map[uint64]map[string]time.Time{},
			bad: map[uint64][]string{}, counter: map[uint64]counterRead{}}
		w.nodes = append(w.nodes, nw)
		if n.BeaconURL == "" {
			nw.down = []outage{{Why: "the node has no beacon API"}}
			connected <- struct{}{}
			continue
		}
		nw.down = []outage{{Why: "not subscribed yet"}}
		s, err := beacon.NewStream(n.BeaconURL, nil, beacon.WithStreamClock(p.now), beacon.WithStreamBackoff(p.backoff[0], p.backoff[1]))
		if err != nil {
			cancel()
			w.wg.Wait()
			return nil, fmt.Errorf("watch node %s: %w", n.ID, err)
		}
		h := &handler{n: nw, w: w, done: connected}
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			_ = s.Run(life, h)
		}()
	}
	settle := time.NewTimer(p.settle)
	defer settle.Stop()
	for range sorted {
		select {
		case <-connected:
		case <-settle.C:
		case <-ctx.Done():
			w.Close()
			return nil, fmt.Errorf("watch: %w", ctx.Err())
		}
	}
	w.first = w.slotAt(p.now()) + 1
	for _, nw := range w.nodes {
		for _, n := range sorted {
			if n.ID == nw.id && n.MetricsURL != "" {
				w.wg.Add(1)
				go func() {
					defer w.wg.Done()
					w.readCounters(life, n, nw)
				}()
			}
		}
	}
	return w, nil
}

// Close stops every stream and counter read and waits for them.
func (w *Watch) Close() {
	w.cancel()
	w.wg.Wait()
}

// FirstSlot is the first measured slot: every stream had connected (or
// failed) before it started.
func (w *Watch) FirstSlot() uint64 { return w.first }

// slotAt is the slot under way at t (0 before genesis).
func (w *Watch) slotAt(t time.Time) uint64 {
	if t.Before(w.timing.Genesis) {
		return 0
	}
	return uint64(t.Sub(w.timing.Genesis) / w.timing.SlotDuration)
}

// handler feeds one node's stream into its record.
type handler struct {
	n    *node
	w    *Watch
	once sync.Once
	done chan<- struct{} // told once, at the first connection or failure
}

func (h *handler) Event(e beacon.SlotEvent) {
	h.n.mu.Lock()
	defer h.n.mu.Unlock()
	byTopic := h.n.events[e.Slot]
	if byTopic == nil {
		byTopic = map[string]time.Time{}
		h.n.events[e.Slot] = byTopic
	}
	if _, seen := byTopic[e.Topic]; !seen { // a repeat is not the first report
		byTopic[e.Topic] = e.At
	}
}

func (h *handler) BadEvent(topic string, at time.Time, err error) {
	h.n.mu.Lock()
	defer h.n.mu.Unlock()
	slot := h.w.slotAt(at)
	h.n.bad[slot] = append(h.n.bad[slot], fmt.Sprintf("undecodable %s event at %s: %v", topic, clock(at), err))
}

func (h *handler) State(s beacon.StreamState) {
	h.n.mu.Lock()
	last := &h.n.down[len(h.n.down)-1]
	switch {
	case s.Up && last.To.IsZero():
		last.To = s.At
	case !s.Up && !last.To.IsZero():
		why := "down"
		if s.Err != nil {
			why = s.Err.Error()
		}
		h.n.down = append(h.n.down, outage{From: s.At, Why: why})
	case !s.Up && s.Err != nil && last.Why == "not subscribed yet":
		last.Why = s.Err.Error() // never connected: say why
	}
	h.n.mu.Unlock()
	h.once.Do(func() { h.done <- struct{}{} })
}

// clock prints t as a time of day with milliseconds, for gap reasons.
func clock(t time.Time) string { return t.UTC().Format("15:04:05.000") }

// readCounters reads n's per-topic counter and ReceiveBlock summary at the
// start of every slot from the first measured one on (sent readLead before
// it).
func (w *Watch) readCounters(ctx context.Context, n devnet.Node, nw *node) {
	// One attempt: a boundary read that retries is no longer at the boundary.
	src, err := scrape.NewDirect(scrape.WithRetries(0))
	for slot := w.first; ; slot++ {
		at := w.timing.SlotStart(slot)
		select {
		case <-ctx.Done():
			return
		case <-time.After(at.Add(-w.readLead()).Sub(w.p.now())):
		}
		read := counterRead{err: err}
		if err == nil {
			var snap *metrics.Snapshot
			if snap, read.err = src.Snapshot(ctx, n); read.err == nil {
				read.bytes, read.present = snap.TopicBytes, snap.HasTopicBytes
				read.recvMs, read.recvN, read.recvPresent = snap.ReceiveBlockMillis, snap.ReceiveBlocks, snap.HasReceiveBlock
			}
			read.late = w.p.now().Sub(at)
		}
		if ctx.Err() != nil {
			return
		}
		nw.mu.Lock()
		nw.counter[slot] = read
		nw.mu.Unlock()
	}
}

// window is the time slot's events are expected in: the slot and the next
// (an availability can come after the slot ends).
func (w *Watch) window(slot uint64) (from, to time.Time) {
	return w.timing.SlotStart(slot), w.timing.SlotStart(slot + 2)
}

// gaps returns why each slot from first to the current one could not be
// watched whole on nw, for slots that could not.
func (w *Watch) gaps(nw *node, now time.Time) map[uint64]string {
	out := map[uint64]string{}
	add := func(slot uint64, why string) {
		if out[slot] == "" {
			out[slot] = why
		} else if !strings.Contains(out[slot], why) {
			out[slot] += "; " + why
		}
	}
	for slot := w.first; slot <= w.slotAt(now); slot++ {
		from, to := w.window(slot)
		for _, o := range nw.down {
			end := o.To
			if end.IsZero() {
				end = now
			}
			if (o.From.IsZero() || o.From.Before(to)) && end.After(from) {
				switch {
				case o.From.IsZero() && o.To.IsZero():
					add(slot, "event stream never connected: "+o.Why)
				case o.To.IsZero():
					add(slot, fmt.Sprintf("event stream down since %s: %s", clock(o.From), o.Why))
				case o.From.IsZero():
					add(slot, fmt.Sprintf("event stream connected only at %s", clock(o.To)))
				default:
					add(slot, fmt.Sprintf("event stream down %s–%s (%s; reconnected)", clock(o.From), clock(o.To), o.Why))
				}
			}
		}
		for _, b := range nw.bad[slot] {
			add(slot, b)
		}
	}
	return out
}

// eventSeries is the record series each topic feeds.
var eventSeries = map[string]string{
	metrics.TopicBlockGossip:      metrics.NameBlockArrivalTimestamp,
	metrics.TopicBlock:            metrics.NameBlockInstalledTimestamp,
	metrics.TopicPayloadGossip:    metrics.NamePayloadGossip,
	metrics.TopicPayloadAvailable: metrics.NameCompletedTimestamp,
}

// Snapshots returns every node's standard readings so far as a snapshot
// of origin metrics.OriginStandardAPI, by node id: the events of the
// measured slots, the bytes of every slot whose both boundary reads
// succeeded, the builder's reveal (the first payload gossip report of the
// slot on any node) and payload sizes, and the gaps. A node not watched is
// an error naming it.
func (w *Watch) Snapshots(ctx context.Context, nodes []devnet.Node) (map[string]*metrics.Snapshot, error) {
	now := w.p.now()
	out := map[string]*metrics.Snapshot{}
	reveal := map[uint64]time.Time{}
	var builder *metrics.Snapshot
	for _, n := range nodes {
		nw := w.node(n.ID)
		if nw == nil {
			return nil, fmt.Errorf("standard readings: node %s is not watched", n.ID)
		}
		snap := metrics.NewSnapshot(n.ID+" (standard API)", metrics.OriginStandardAPI)
		nw.mu.Lock()
		installTimes := nw.receiveBlock()
		for slot, byTopic := range nw.events {
			if slot < w.first {
				continue // it may have started before every stream was up
			}
			st := snap.AddSlot(slot)
			for topic, at := range byTopic {
				if topic == metrics.TopicBlockGossip && installTimes {
					continue // the arrival is the install time before the block event (addInstall)
				}
				if err := st.SetTime(eventSeries[topic], at); err != nil {
					nw.mu.Unlock()
					return nil, fmt.Errorf("standard readings of node %s: %w", n.ID, err)
				}
			}
			if at, ok := byTopic[metrics.TopicPayloadGossip]; ok && (reveal[slot].IsZero() || at.Before(reveal[slot])) {
				reveal[slot] = at
			}
		}
		snap.Gaps = w.gaps(nw, now)
		if installTimes {
			if err := w.addInstall(snap, nw); err != nil {
				nw.mu.Unlock()
				return nil, fmt.Errorf("standard readings of node %s: %w", n.ID, err)
			}
		}
		w.addBytes(snap, nw)
		nw.mu.Unlock()
		out[n.ID] = snap
		if nw.builder && builder == nil {
			builder = snap
		}
	}
	builders := map[uint64]*metrics.Snapshot{}
	for slot := range reveal {
		builders[slot] = builder
	}
	if builder == nil {
		var err error
		if builders, err = w.selfBuilders(ctx, nodes, out, reveal, now); err != nil {
			return nil, err
		}
	}
	for slot, at := range reveal {
		if b := builders[slot]; b != nil {
			st := b.AddSlot(slot)
			if err := st.SetTime(metrics.NameRevealTimestamp, at); err != nil {
				return nil, fmt.Errorf("standard readings: %w", err)
			}
			if sz, ok := w.size(ctx, slot, now); ok {
				_ = st.SetCount(metrics.NamePayloadSize+`{encoding="raw"}`, uint64(sz.Raw))
				_ = st.SetCount(metrics.NamePayloadSize+`{encoding="compressed"}`, uint64(sz.Compressed))
			}
		}
	}
	return out, nil
}

// selfBuilders returns, for a network without a builder node, each
// revealed slot's builder: the node holding the slot's proposer (a
// self-build bid). A slot whose proposer cannot be read or is no node's
// validator has no builder, and every node's gaps say why; a network whose
// nodes do not say which validators they hold is an error.
func (w *Watch) selfBuilders(ctx context.Context, nodes []devnet.Node, snaps map[string]*metrics.Snapshot, reveal map[uint64]time.Time, now time.Time) (map[uint64]*metrics.Snapshot, error) {
	ranged := false
	for _, n := range nodes {
		ranged = ranged || n.Validators.Count > 0
	}
	if !ranged {
		return nil, errors.New("standard readings: no node holds the builder role and none says which validators it holds, so the node that built each payload (its slot's proposer) is unknown; write the endpoints again with this build (segdiff devnet up)")
	}
	out := map[uint64]*metrics.Snapshot{}
	for slot := range reveal {
		idx, err := w.proposerOf(ctx, slot, now)
		why := ""
		switch {
		case err != nil:
			why = fmt.Sprintf("the builder of slot %d (its proposer) is unknown: %v", slot, err)
		default:
			for _, n := range nodes {
				if n.Validators.Holds(idx) {
					out[slot] = snaps[n.ID]
				}
			}
			if out[slot] == nil {
				why = fmt.Sprintf("slot %d's proposer, validator %d, is no node's validator: its builder is unknown", slot, idx)
			}
		}
		if why != "" {
			for _, snap := range snaps {
				if snap.Gaps[slot] != "" {
					why = snap.Gaps[slot] + "; " + why
				}
				snap.Gaps[slot] = why
			}
		}
	}
	return out, nil
}

// proposerOf returns slot's proposer index, reading it once; a failed read
// is retried no sooner than sizeRetry later.
func (w *Watch) proposerOf(ctx context.Context, slot uint64, now time.Time) (uint64, error) {
	if w.p.proposers == nil {
		return 0, errors.New("the watch reads no proposers")
	}
	w.sizeMu.Lock()
	defer w.sizeMu.Unlock()
	if idx, ok := w.proposer[slot]; ok {
		return idx, nil
	}
	if t, ok := w.proposeAt[slot]; ok && now.Sub(t) < w.p.sizeRetry {
		return 0, fmt.Errorf("the last read, at %s, failed", clock(t))
	}
	idx, err := w.p.proposers.Proposer(ctx, slot)
	if err != nil {
		w.proposeAt[slot] = now
		return 0, err
	}
	w.proposer[slot] = idx
	return idx, nil
}

// receiveBlock reports whether nw's client exports
// metrics.ReceiveBlockSeries: then its install time, not the block_gossip
// event, gives the block's arrival. nw.mu must be held.
func (nw *node) receiveBlock() bool {
	for _, r := range nw.counter {
		if r.recvPresent {
			return true
		}
	}
	return false
}

// addInstall sets each slot's block arrival to the block event's receipt
// less the time ReceiveBlock took for the block: the sum's growth between
// the slot's boundary reads, when exactly one block went through it then.
// Another count is a gap of the slot, with why (a failed or late read is
// one already, from byteGaps).
func (w *Watch) addInstall(snap *metrics.Snapshot, nw *node) error {
	for slot, at := range nw.counter {
		next, ok := nw.counter[slot+1]
		st := snap.Slot(slot)
		if !ok || st == nil || !st.Has(metrics.NameBlockInstalledTimestamp) || slot < w.first {
			continue
		}
		if at.err != nil || next.err != nil || at.late > w.lateRead() || next.late > w.lateRead() || !at.recvPresent || !next.recvPresent {
			continue
		}
		why := ""
		switch n := next.recvN - at.recvN; {
		case next.recvN < at.recvN:
			why = fmt.Sprintf("%s went back from %d to %d blocks (the node restarted)", metrics.ReceiveBlockSeries, at.recvN, next.recvN)
		case n != 1:
			why = fmt.Sprintf("%s counted %d blocks between the reads at the starts of slots %d and %d: the install time of slot %d's block cannot be told apart",
				metrics.ReceiveBlockSeries, n, slot, slot+1, slot)
		default:
			d := time.Duration((next.recvMs - at.recvMs) * float64(time.Millisecond))
			if err := st.SetTime(metrics.NameBlockArrivalTimestamp, st.BlockInstalled.Add(-d)); err != nil {
				return err
			}
			continue
		}
		if snap.Gaps[slot] != "" {
			why = snap.Gaps[slot] + "; " + why
		}
		snap.Gaps[slot] = why
	}
	return nil
}

// addBytes sets each slot's payload-topic bytes: the counter at the next
// slot's start minus the counter at this one's. A failed read or a counter
// that went back is a gap of the slots it bounds.
func (w *Watch) addBytes(snap *metrics.Snapshot, nw *node) {
	for slot, at := range nw.counter {
		next, ok := nw.counter[slot+1]
		if !ok {
			continue
		}
		switch {
		case at.err != nil || next.err != nil || at.late > w.lateRead() || next.late > w.lateRead():
			continue // reported by byteGaps
		case !at.present || !next.present:
			continue // no byte source on this node: the reading stays absent
		case next.bytes < at.bytes:
			continue
		}
		_ = snap.AddSlot(slot).SetCount(metrics.NameReceivedBytes+`{kind="data"}`, next.bytes-at.bytes)
	}
	for slot, why := range byteGaps(nw.counter, w.lateRead()) {
		if slot < w.first {
			continue
		}
		if snap.Gaps[slot] != "" {
			why = snap.Gaps[slot] + "; " + why
		}
		snap.Gaps[slot] = why
	}
}

// byteGaps says which slots' bytes a failed read, a read later than
// late, or a reset counter lost.
func byteGaps(reads map[uint64]counterRead, late time.Duration) map[uint64]string {
	out := map[uint64]string{}
	add := func(slot uint64, why string) {
		if out[slot] != "" {
			why = out[slot] + "; " + why
		}
		out[slot] = why
	}
	bounds := func(slot uint64, why string) {
		add(slot, why)
		if slot > 0 {
			add(slot-1, why)
		}
	}
	for _, slot := range slices.Sorted(maps.Keys(reads)) {
		r := reads[slot]
		switch {
		case r.err != nil:
			bounds(slot, fmt.Sprintf("the /metrics read (%s, %s) at the start of slot %d failed: %v", metrics.TopicBytesSeries, metrics.ReceiveBlockSeries, slot, r.err))
		case r.late > late:
			bounds(slot, fmt.Sprintf("the /metrics read (%s, %s) at the start of slot %d came back %d ms late (limit %d ms, an eighth of the slot): it may hold either slot's bytes and blocks",
				metrics.TopicBytesSeries, metrics.ReceiveBlockSeries, slot, r.late.Milliseconds(), late.Milliseconds()))
		case r.present && slot > 0:
			if prev, ok := reads[slot-1]; ok && prev.err == nil && prev.present && r.bytes < prev.bytes {
				add(slot-1, fmt.Sprintf("%s went back from %d to %d (the node restarted)", metrics.TopicBytesSeries, prev.bytes, r.bytes))
			}
		}
	}
	return out
}

func (w *Watch) node(id string) *node {
	for _, n := range w.nodes {
		if n.id == id {
			return n
		}
	}
	return nil
}

// size returns slot's payload size, reading it once it is known to exist;
// a failed read is retried no sooner than sizeRetry later.
func (w *Watch) size(ctx context.Context, slot uint64, now time.Time) (beacon.PayloadSize, bool) {
	if w.p.sizer == nil {
		return beacon.PayloadSize{}, false
	}
	w.sizeMu.Lock()
	defer w.sizeMu.Unlock()
	if sz, ok := w.sizes[slot]; ok {
		return sz, true
	}
	if t, ok := w.tried[slot]; ok && now.Sub(t) < w.p.sizeRetry {
		return beacon.PayloadSize{}, false
	}
	sz, err := w.p.sizer.PayloadSize(ctx, slot)
	if err != nil {
		w.tried[slot] = now
		return beacon.PayloadSize{}, false
	}
	w.sizes[slot] = sz
	return sz, true
}
