package kurtosis

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// slotClock is the chain's wall clock: genesis and the slot duration.
type slotClock struct {
	genesis time.Time
	slot    time.Duration
}

func (c slotClock) known() bool { return c.slot > 0 && !c.genesis.IsZero() }

// wallSlot is the slot at now; ok is false before genesis.
func (c slotClock) wallSlot(now time.Time) (slot uint64, ok bool) {
	if now.Before(c.genesis) {
		return 0, false
	}
	return uint64(now.Sub(c.genesis) / c.slot), true
}

// headReading is one read of a node's head: its slot, or why none came.
type headReading struct {
	at   time.Time
	slot uint64
	err  error
}

// nodeHead is what the judge remembers of one node.
type nodeHead struct {
	// watched is when the node was first watched.
	watched time.Time
	// answered says some reading had a head; first is that first head.
	answered bool
	first    uint64
	// head is the highest head seen; moved is when it last rose (watched
	// until it first does).
	head  uint64
	moved time.Time
	// err is the latest reading's error, nil when it answered.
	err error
}

// chainJudge turns head readings into verdicts. It does no I/O and takes
// the time as an argument, so a table of readings and instants tests it.
//
// A node is stalled when, after genesis, its head is more than stallSlots
// slots behind the wall-clock slot and has not advanced for stallSlots
// slots of wall time (counted from genesis, or from when the node was
// first watched if later): a head that stops at slot h fails the check at
// the start of slot h+stallSlots+1. A node that never answered counts as
// head 0. The chain is progressing when every node answered and its head
// advanced progressSlots slots past its first reading.
type chainJudge struct {
	stallSlots, progressSlots uint64
	clock                     slotClock
	nodes                     map[string]*nodeHead
}

func newChainJudge(stallSlots, progressSlots uint64) *chainJudge {
	return &chainJudge{stallSlots: stallSlots, progressSlots: progressSlots, nodes: map[string]*nodeHead{}}
}

// watch starts watching id at now; a node already watched is kept as is.
func (j *chainJudge) watch(id string, now time.Time) {
	if _, ok := j.nodes[id]; !ok {
		j.nodes[id] = &nodeHead{watched: now, moved: now}
	}
}

// observe records a reading of id (watching it from r.at if new).
func (j *chainJudge) observe(id string, r headReading) {
	j.watch(id, r.at)
	n := j.nodes[id]
	n.err = r.err
	if r.err != nil {
		return
	}
	switch {
	case !n.answered:
		n.answered, n.first, n.head = true, r.slot, r.slot
		if r.slot > 0 {
			n.moved = r.at
		}
	case r.slot > n.head:
		n.head, n.moved = r.slot, r.at
	}
}

// nodeStatus is one node in a verdict.
type nodeStatus struct {
	id       string
	answered bool
	head     uint64
	advanced uint64
	// behind is the wall slot minus the head (0 before genesis or when ahead).
	behind uint64
	// still is how long the head has not advanced (since genesis at most).
	still   time.Duration
	stalled bool
	err     error
}

// chainVerdict is the judgement at one instant over the nodes asked about.
type chainVerdict struct {
	clockKnown bool
	preGenesis bool
	// untilGenesis is the wait left before genesis (preGenesis only).
	untilGenesis time.Duration
	wallSlot     uint64
	// nodes are sorted by id; stalled lists the stalled ones.
	nodes   []nodeStatus
	stalled []nodeStatus
	// done: at least one node, none stalled, each advanced progressSlots.
	done bool
}

// verdict judges ids (each watched from now if new) at now.
func (j *chainJudge) verdict(now time.Time, ids []string) chainVerdict {
	v := chainVerdict{clockKnown: j.clock.known()}
	var after bool
	if v.clockKnown {
		v.wallSlot, after = j.clock.wallSlot(now)
		if !after {
			v.preGenesis, v.untilGenesis = true, j.clock.genesis.Sub(now)
		}
	}
	sorted := append([]string(nil), ids...)
	sort.Strings(sorted)
	v.done = len(sorted) > 0
	for _, id := range sorted {
		j.watch(id, now)
		n := j.nodes[id]
		s := nodeStatus{id: id, answered: n.answered, head: n.head, err: n.err}
		if n.answered {
			s.advanced = n.head - n.first
		}
		if after {
			if v.wallSlot > n.head {
				s.behind = v.wallSlot - n.head
			}
			since := n.moved
			if since.Before(j.clock.genesis) {
				since = j.clock.genesis
			}
			s.still = now.Sub(since)
			s.stalled = s.behind > j.stallSlots && s.still > time.Duration(j.stallSlots)*j.clock.slot
		}
		if s.stalled {
			v.stalled = append(v.stalled, s)
		}
		v.done = v.done && !s.stalled && n.answered && s.advanced >= j.progressSlots
		v.nodes = append(v.nodes, s)
	}
	return v
}

// progressLine is the one-line state of the chain, e.g.
// "head slot 5 / wall slot 6 on cl-1-prysm-geth, 6 on cl-2-prysm-geth".
func (v chainVerdict) progressLine() string {
	var b strings.Builder
	for i, n := range v.nodes {
		switch {
		case i == 0 && n.answered:
			fmt.Fprintf(&b, "head slot %d / wall slot %d on %s", n.head, v.wallSlot, n.id)
		case i == 0:
			fmt.Fprintf(&b, "no head yet / wall slot %d on %s", v.wallSlot, n.id)
		case n.answered:
			fmt.Fprintf(&b, ", %d on %s", n.head, n.id)
		default:
			fmt.Fprintf(&b, ", none yet on %s", n.id)
		}
		if n.err != nil {
			fmt.Fprintf(&b, " (%s)", oneLine(n.err.Error(), 100))
		}
	}
	return b.String()
}

// pending says which nodes have not advanced enough yet, or why nothing can
// be judged.
func (v chainVerdict) pending(progressSlots uint64) string {
	switch {
	case !v.clockKnown:
		return "no node has told its genesis time and slot duration yet"
	case v.preGenesis:
		return fmt.Sprintf("genesis is %v away", v.untilGenesis.Round(time.Second))
	case len(v.nodes) == 0:
		return "no CL to watch yet"
	}
	var waiting []string
	for _, n := range v.nodes {
		switch {
		case !n.answered && n.err != nil:
			waiting = append(waiting, fmt.Sprintf("%s has not answered (%s)", n.id, oneLine(n.err.Error(), 100)))
		case !n.answered:
			waiting = append(waiting, n.id+" has not answered")
		case n.advanced < progressSlots:
			waiting = append(waiting, fmt.Sprintf("%s advanced %d of %d slots (head %d, wall slot %d)", n.id, n.advanced, progressSlots, n.head, v.wallSlot))
		}
	}
	return strings.Join(waiting, "; ")
}
