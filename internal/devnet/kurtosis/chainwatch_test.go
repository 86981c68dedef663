package kurtosis

import (
	"cmp"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestChainJudge drives the stall and progress verdicts with head readings
// at given instants (in slots from genesis; 12 s slots) and checks the
// verdict at others: no network, the clock injected.
func TestChainJudge(t *testing.T) {
	genesis := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	const slot = 12 * time.Second
	at := func(s float64) time.Time { return genesis.Add(time.Duration(s * float64(slot))) }

	type reading struct {
		at   float64
		node string
		head uint64
		err  string
	}
	type check struct {
		at      float64
		pre     bool
		wall    uint64
		stalled []string
		done    bool
	}
	// every returns node's readings from..to (slots) every step slots, the
	// head given by head(t).
	every := func(node string, from, to, step float64, head func(t float64) uint64) []reading {
		var out []reading
		for s := from; s <= to+1e-9; s += step {
			out = append(out, reading{at: s, node: node, head: head(s)})
		}
		return out
	}
	follows := func(t float64) uint64 { // a healthy head: the wall slot's block, 1 s in
		if t < 0 {
			return 0
		}
		s := uint64(t)
		if t-float64(s) < 1.0/12 && s > 0 {
			s--
		}
		return s
	}
	stuckAt := func(h uint64, from float64) func(float64) uint64 {
		return func(t float64) uint64 {
			if t >= from {
				return min(follows(t), h)
			}
			return follows(t)
		}
	}
	failing := func(node string, from, to, step float64, msg string) []reading {
		var out []reading
		for s := from; s <= to+1e-9; s += step {
			out = append(out, reading{at: s, node: node, err: msg})
		}
		return out
	}
	cat := func(rs ...[]reading) []reading {
		var out []reading
		for _, r := range rs {
			out = append(out, r...)
		}
		return out
	}
	tests := []struct {
		name            string
		stall, progress uint64
		noClock         bool
		reads           []reading
		checks          []check
	}{
		{name: "healthy chain: done once each head advanced two slots",
			reads: cat(every("cl-1", -1, 4, 0.25, follows), every("cl-2", -1, 4, 0.25, follows)),
			checks: []check{
				{at: -0.5, pre: true},
				{at: 1.5, wall: 1},
				{at: 2.5, wall: 2, done: true},
				{at: 4, wall: 4, done: true},
			}},
		{name: "every proposal refused from genesis: stalled at the start of slot 3",
			reads: cat(every("cl-1", -1, 4, 0.25, func(float64) uint64 { return 0 }), every("cl-2", -1, 4, 0.25, func(float64) uint64 { return 0 })),
			checks: []check{
				{at: 2.75, wall: 2},
				{at: 3, wall: 3, stalled: []string{"cl-1", "cl-2"}},
			}},
		{name: "a head that stops at slot 5 is stalled at the start of slot 8",
			reads: cat(every("cl-1", -1, 9, 0.25, stuckAt(5, 5)), every("cl-2", -1, 9, 0.25, follows)),
			checks: []check{
				{at: 7.75, wall: 7, done: true},
				{at: 8, wall: 8, stalled: []string{"cl-1"}},
			}},
		{name: "one empty slot, then two: never stalled",
			reads: cat(every("cl-1", -1, 8, 0.25, func(t float64) uint64 {
				switch s := follows(t); {
				case s == 2:
					return 1 // slot 2 empty
				case s == 5 || s == 6:
					return 4 // slots 5 and 6 empty
				default:
					return s
				}
			})),
			checks: []check{{at: 3, wall: 3}, {at: 3.25, wall: 3, done: true}, {at: 6.9, wall: 6, done: true}, {at: 8, wall: 8, done: true}}},
		{name: "a syncing node far behind but advancing is not stalled",
			reads:  cat(every("cl-1", 10, 16, 0.25, func(t float64) uint64 { return uint64(t) - 8 }), every("cl-2", 10, 16, 0.25, follows)),
			checks: []check{{at: 11, wall: 11}, {at: 16, wall: 16, done: true}}},
		{name: "a node that never answers is stalled two slots after genesis",
			reads:  cat(failing("cl-1", -1, 4, 0.25, "connection refused"), every("cl-2", -1, 4, 0.25, follows)),
			checks: []check{{at: 2.9, wall: 2}, {at: 3, wall: 3, stalled: []string{"cl-1"}}}},
		{name: "a node whose API goes down after slot 4",
			reads:  cat(every("cl-1", -1, 4.25, 0.25, follows), failing("cl-1", 4.5, 8, 0.25, "EOF")),
			checks: []check{{at: 6.9, wall: 6, done: true}, {at: 7.25, wall: 7, stalled: []string{"cl-1"}}}},
		{name: "a node first watched late gets two slots of grace",
			reads:  cat(every("cl-1", 20, 24, 0.25, func(float64) uint64 { return 0 })),
			checks: []check{{at: 22, wall: 22}, {at: 22.25, wall: 22, stalled: []string{"cl-1"}}}},
		{name: "a reorg to a lower slot is no progress and no regression",
			reads: []reading{{at: 0.5, node: "cl-1", head: 0}, {at: 1.1, node: "cl-1", head: 1}, {at: 2.1, node: "cl-1", head: 2},
				{at: 2.6, node: "cl-1", head: 1}, {at: 3.1, node: "cl-1", head: 3}},
			checks: []check{{at: 2.7, wall: 2, done: true}, {at: 3.2, wall: 3, done: true}}},
		{name: "a wider stall threshold waits longer",
			stall:  4,
			reads:  every("cl-1", -1, 6, 0.25, func(float64) uint64 { return 0 }),
			checks: []check{{at: 4.99, wall: 4}, {at: 5, wall: 5, stalled: []string{"cl-1"}}}},
		{name: "more progress slots",
			progress: 5,
			reads:    every("cl-1", -1, 6, 0.25, follows),
			checks:   []check{{at: 4.5, wall: 4}, {at: 5.5, wall: 5, done: true}}},
		{name: "without a clock nothing is judged",
			noClock: true,
			reads:   every("cl-1", -1, 6, 0.25, func(float64) uint64 { return 0 }),
			checks:  []check{{at: 6, wall: 0}}},
		{name: "a head already far along when first read (a re-run) counts from there",
			reads: every("cl-1", 500, 503, 0.25, follows),
			checks: []check{
				{at: 501, wall: 501},
				{at: 502.5, wall: 502, done: true},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stall, progress := tt.stall, tt.progress
			if stall == 0 {
				stall = 2
			}
			if progress == 0 {
				progress = 2
			}
			j := newChainJudge(stall, progress)
			if !tt.noClock {
				j.clock = slotClock{genesis: genesis, slot: slot}
			}
			ids := map[string]bool{}
			for _, r := range tt.reads {
				ids[r.node] = true
			}
			var nodes []string
			for id := range ids {
				nodes = append(nodes, id)
			}
			reads := slices.Clone(tt.reads)
			slices.SortStableFunc(reads, func(a, b reading) int { return cmp.Compare(a.at, b.at) })
			next := 0
			for _, c := range tt.checks {
				for ; next < len(reads) && reads[next].at <= c.at; next++ {
					r := reads[next]
					var err error
					if r.err != "" {
						err = errors.New(r.err)
					}
					j.observe(r.node, headReading{at: at(r.at), slot: r.head, err: err})
				}
				v := j.verdict(at(c.at), nodes)
				var stalled []string
				for _, s := range v.stalled {
					stalled = append(stalled, s.id)
				}
				if v.preGenesis != c.pre || v.wallSlot != c.wall || !reflect.DeepEqual(stalled, c.stalled) || v.done != c.done {
					t.Errorf("at slot %v: pre-genesis %v, wall %d, stalled %v, done %v; want %v, %d, %v, %v\n%s",
						c.at, v.preGenesis, v.wallSlot, stalled, v.done, c.pre, c.wall, c.stalled, c.done, v.progressLine())
				}
			}
		})
	}
}

// TestChainJudgeReport: the verdict's nodes are sorted, a node that never
// answered is reported with its error, and the progress and pending lines
// say so.
func TestChainJudgeReport(t *testing.T) {
	genesis := time.Unix(1_800_000_000, 0)
	j := newChainJudge(2, 2)
	j.clock = slotClock{genesis: genesis, slot: time.Second}
	j.observe("a", headReading{at: genesis.Add(-time.Second), slot: 0})
	j.observe("b", headReading{at: genesis.Add(-time.Second), err: errors.New("connection refused")})
	v := j.verdict(genesis.Add(3*time.Second), []string{"b", "a"})
	if len(v.stalled) != 2 || v.stalled[0].id != "a" || v.stalled[1].id != "b" || v.stalled[1].answered {
		t.Fatalf("stalled = %+v", v.stalled)
	}
	if got := v.progressLine(); got != "head slot 0 / wall slot 3 on a, none yet on b (connection refused)" {
		t.Errorf("progress line %q", got)
	}
	if got := v.pending(2); !strings.Contains(got, "a advanced 0 of 2 slots (head 0, wall slot 3)") || !strings.Contains(got, "b has not answered (connection refused)") {
		t.Errorf("pending %q", got)
	}
}

func TestSpecSlot(t *testing.T) {
	tests := []struct {
		spec map[string]any
		want time.Duration
	}{
		{map[string]any{"SECONDS_PER_SLOT": "12"}, 12 * time.Second},
		{map[string]any{"SECONDS_PER_SLOT": "12", "SLOT_DURATION_MS": "6000"}, 6 * time.Second},
		{map[string]any{"SECONDS_PER_SLOT": "12", "SLOT_DURATION_MS": "0"}, 12 * time.Second},
		{map[string]any{}, 0},
	}
	for _, tt := range tests {
		got, err := specSlot(tt.spec)
		if got != tt.want || (err != nil) != (tt.want == 0) {
			t.Errorf("specSlot(%v) = %v, %v; want %v", tt.spec, got, err, tt.want)
		}
	}
}
