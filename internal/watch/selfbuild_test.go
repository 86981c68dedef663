package watch_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/segdiff/segdiff/internal/beacon/beacontest"
	"github.com/segdiff/segdiff/internal/devnet"
	"github.com/segdiff/segdiff/internal/watch"
	"github.com/segdiff/segdiff/metrics"
)

// proposers maps slot s to validator 10*(s%3)+1 (node s%3's), slot 4's to
// validator 99 (no node's), and fails slot 3's read.
type proposers struct{}

func (proposers) Proposer(_ context.Context, slot uint64) (uint64, error) {
	switch slot {
	case 3:
		return 0, errors.New("beacon node said 503")
	case 4:
		return 99, nil
	}
	return 10*(slot%3) + 1, nil
}

// TestSelfBuildRevealGoesToTheProposer: on a network without a builder node
// each proposer builds its own payload; the reveal (the first gossip report
// of the payload on any node) goes to the record of the node holding the
// slot's proposer, and a slot whose builder cannot be told is a gap on
// every node, with the reason.
func TestSelfBuildRevealGoesToTheProposer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		memnet := newMemNet(t)
		clock := &beacontest.Clock{Lead: 200 * time.Millisecond}
		chain := beacontest.NewChain(time.Time{})
		chain.Clock = clock
		var nodes []devnet.Node
		for i := range 3 {
			id := fmt.Sprintf("n%02d", i)
			var evs []beacontest.Event
			for s := uint64(1); s <= slots; s++ {
				if s%3 == uint64(i) {
					continue // its own payload: no gossip report
				}
				start := time.Duration(s) * slotDur
				evs = append(evs, beacontest.Event{Topic: metrics.TopicPayloadGossip, Slot: s, At: start + time.Duration(50+10*i)*time.Millisecond})
			}
			stream := &beacontest.Stream{Clock: clock, Events: evs}
			nodes = append(nodes, devnet.Node{ID: id, Roles: []devnet.Role{devnet.RoleNode, devnet.RoleProposer}, Client: "fake",
				BeaconURL: memnet.serve(t, id+".beacon", beacontest.Node(chain, stream)), Validators: devnet.ValidatorRange{First: uint64(10 * i), Count: 10}})
		}
		timing := devnet.Timing{Genesis: clock.Genesis(), SlotDuration: slotDur}
		w, err := watch.Start(context.Background(), nodes, timing, watch.WithSizer(sizer{}), watch.WithProposers(proposers{}), watch.WithSettle(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		time.Sleep(time.Until(timing.SlotStart(slots + 2)))
		snaps, err := w.Snapshots(context.Background(), nodes)
		if err != nil {
			t.Fatal(err)
		}
		for s := uint64(1); s <= 2; s++ {
			builder := fmt.Sprintf("n%02d", s%3)
			for _, n := range nodes {
				st := snaps[n.ID].Slot(s)
				has := st != nil && st.Has(metrics.NameRevealTimestamp)
				if has != (n.ID == builder) {
					t.Errorf("slot %d: reveal on %s = %v; want it on the proposer's node %s only", s, n.ID, has, builder)
				}
			}
			// The first report: the lowest-numbered other node, 50 ms + 10 ms per index.
			first := uint64(0)
			if s%3 == 0 {
				first = 1
			}
			want := timing.SlotStart(s).Add(time.Duration(50+10*first) * time.Millisecond)
			if got := snaps[builder].Slot(s).Reveal; !got.Equal(want) {
				t.Errorf("slot %d reveal at %v, want %v", s, got.Sub(timing.Genesis), want.Sub(timing.Genesis))
			}
		}
		for _, n := range nodes {
			if g := snaps[n.ID].Gaps[3]; !strings.Contains(g, "the builder of slot 3 (its proposer) is unknown: beacon node said 503") {
				t.Errorf("%s slot 3 gap %q", n.ID, g)
			}
			if g := snaps[n.ID].Gaps[4]; !strings.Contains(g, "slot 4's proposer, validator 99, is no node's validator") {
				t.Errorf("%s slot 4 gap %q", n.ID, g)
			}
		}
		bare := append([]devnet.Node(nil), nodes...)
		for i := range bare {
			bare[i].Validators = devnet.ValidatorRange{}
		}
		if _, err := w.Snapshots(context.Background(), bare); err == nil || !strings.Contains(err.Error(), "none says which validators it holds") {
			t.Errorf("nodes without validator ranges: %v, want an error saying the builder is unknown", err)
		}
	})
}
