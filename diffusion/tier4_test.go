package diffusion

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"

	pb "github.com/libp2p/go-libp2p-pubsub/pb"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/segdiff/segdiff/diffusion/mode"
	"github.com/segdiff/segdiff/diffusion/role"
)

// Tier 4 and whole-paced on one node, driven on its loop state without a
// router: dispatch is called directly where a flush would call it.

func newTier4Node(t *testing.T, m mode.Mode, r Role, rules StateRules) (*phasedNode, *fakeEnv, fixture) {
	t.Helper()
	f := newFixture(t, m)
	if rules.Without != nil || rules.Window != 0 || rules.Aim != "" || rules.PaceTick != 0 {
		p, err := New(m, Options{SegmentSize: 2048, State: rules})
		if err != nil {
			t.Fatal(err)
		}
		f.policy = p
	}
	n, env := newPhaseNode(t, f, r)
	return n, env, f
}

// tier4Roles are the roles tier 4 reads, the state roles included.
var tier4Roles = []Role{Relay, Withholder, Silent, Mute, role.UnackingWithholder, role.UnderReporter, role.PaddingUnderReporter}

func TestTier4ForwardAcknowledgeAnnounce(t *testing.T) {
	for _, r := range tier4Roles {
		t.Run(r.Name, func(t *testing.T) {
			n, env, f := newTier4Node(t, mode.Tier4, r, StateRules{})
			g := n.newGroup(f.commit)
			n.part(g, "m1", f.msgs[0])
			if !g.held.Has(0) || env.ev.received != 1 {
				t.Fatalf("part 0 held %v, received %d", g.held.Has(0), env.ev.received)
			}
			n.dispatch(time.Now())
			parts, have := outbox(g)
			pushed := 0
			for p, ps := range parts {
				if p == "m1" || !slices.Equal(ps, []int{0}) {
					t.Errorf("%s was sent %v (m1 sent part 0)", p, ps)
				}
				pushed++
			}
			if want := map[bool]int{true: DefaultStateRules.PushBudget}[r.Forward]; pushed != want {
				t.Errorf("pushed to %d peers, want %d (forwards %v)", pushed, want, r.Forward)
			}
			// An announcing node tells its whole mesh, the sender (the
			// acknowledgement) and the peers it pushes to included.
			var want []peer.ID
			if r.Announce {
				want = slices.Clone(phaseMesh)
			}
			if !slices.Equal(have, want) {
				t.Errorf("queued inventory to %v, want %v", have, want)
			}
			// What each peer would be told.
			for _, p := range phaseMesh {
				got := n.haveFor(g, p)
				switch {
				case r.UnderReport && p == "m1":
					if !slices.Equal(got, bitsOf(g.parts, 0)) {
						t.Errorf("the under-reporter tells m1 %v, want only what m1 sent", got)
					}
				case r.UnderReport:
					if got != nil {
						t.Errorf("the under-reporter tells %s %v, want nothing (it sent nothing)", p, got)
					}
				case !r.Acknowledge && p == "m1":
					if got != nil {
						t.Errorf("a node that does not acknowledge tells its pusher %v", got)
					}
				default:
					if !got.Has(0) {
						t.Errorf("%s is not told of part 0", p)
					}
				}
			}
		})
	}
}

// What each under-reporter tells its pushers once m1 has sent parts 2 and
// 5 and m2 part 0 (the node holds 0, 2 and 5; m3 sent nothing): the plain
// one only what that pusher sent, a padding one that and the lowest-index
// parts it holds that the pusher did not send, so that its report to a
// pusher is never only the pusher's own parts once it holds another; a
// peer that sent nothing is told nothing, and nobody is told of a decode.
func TestTier4UnderReporterInventory(t *testing.T) {
	padTwo := role.PaddingUnderReporter
	padTwo.Name, padTwo.UnderReportPad = "padding-under-reporter-2", 2
	tests := []struct {
		name   string
		role   Role
		m1, m2 []int // what m1 and m2 are told
	}{
		{"under-reporter", role.UnderReporter, []int{2, 5}, []int{0}},
		{"padding-under-reporter", role.PaddingUnderReporter, []int{0, 2, 5}, []int{0, 2}},
		{"padding by two", padTwo, []int{0, 2, 5}, []int{0, 2, 5}},
		{"the relay tells everyone what it holds", Relay, []int{0, 2, 5}, []int{0, 2, 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, _, f := newTier4Node(t, mode.Tier4, tt.role, StateRules{})
			g := n.newGroup(f.commit)
			if g.parts < 6 {
				t.Fatalf("%d parts, want at least 6", g.parts)
			}
			n.part(g, "m1", f.msgs[2])
			n.part(g, "m1", f.msgs[5])
			n.part(g, "m2", f.msgs[0])
			for p, want := range map[peer.ID][]int{"m1": tt.m1, "m2": tt.m2} {
				if got := n.haveFor(g, p); !slices.Equal(got, bitsOf(g.parts, want...)) {
					t.Errorf("%s is told %08b, want parts %v", p, got, want)
				}
			}
			if got := n.haveFor(g, "m3"); tt.role.UnderReport && got != nil {
				t.Errorf("m3 sent nothing and is told %08b, want nothing", got)
			}
			if got := n.claimFor(g, "m1"); tt.role.UnderReport && got {
				t.Error("an under-reporter claims a decode")
			}
		})
	}
	t.Run("the padding one pads nothing while it holds only the pusher's parts", func(t *testing.T) {
		n, _, f := newTier4Node(t, mode.Tier4, role.PaddingUnderReporter, StateRules{})
		g := n.newGroup(f.commit)
		n.part(g, "m1", f.msgs[3])
		if got := n.haveFor(g, "m1"); !slices.Equal(got, bitsOf(g.parts, 3)) {
			t.Errorf("m1 is told %08b, want only part 3", got)
		}
		// The padded report is a copy: padding never marks a part as sent
		// by the pusher.
		n.part(g, "m2", f.msgs[1])
		if got := n.haveFor(g, "m1"); !slices.Equal(got, bitsOf(g.parts, 1, 3)) {
			t.Errorf("m1 is told %08b, want parts 1 and 3", got)
		}
		if sent := n.st.peer(g, "m1").sentBy; !slices.Equal(sent, bitsOf(g.parts, 3)) {
			t.Errorf("m1's sentBy became %08b, want only part 3", sent)
		}
	})
}

func TestTier4DecodeClaim(t *testing.T) {
	t.Run("a node that can rebuild claims it to its mesh, once", func(t *testing.T) {
		n, env, f := newTier4Node(t, mode.Tier4, Relay, StateRules{})
		g := n.newGroup(f.commit)
		for i := range g.need {
			n.part(g, "m1", f.msgs[i])
		}
		if env.ev.completed != 1 {
			t.Fatalf("completed %d times, want 1", env.ev.completed)
		}
		for _, p := range phaseMesh {
			if o := g.outbox[p]; o == nil || !o.claim {
				t.Errorf("no decode claim queued to %s", p)
			}
			if !n.claimFor(g, p) || n.claimFor(g, p) {
				t.Errorf("the claim to %s is not sent exactly once", p)
			}
		}
	})
	t.Run("a claim cancels what is queued to the claimant", func(t *testing.T) {
		n, _, f := newTier4Node(t, mode.Tier4, Relay, StateRules{Without: []Card{CardAim}})
		g := n.newGroup(f.commit)
		n.part(g, "m1", f.msgs[0])
		// m2..m5 claim: nobody is left to push to.
		for _, p := range phaseMesh[1:] {
			n.control(g, p, Control{Parts: g.parts, Decoded: true})
		}
		n.dispatch(time.Now())
		if parts, _ := outbox(g); len(parts) != 0 {
			t.Errorf("pushed %v to peers that claimed the payload", parts)
		}
		if n.st.queue.Len() != 0 {
			t.Errorf("%d tickets left in the queue", n.st.queue.Len())
		}
	})
	t.Run("without the card no claim", func(t *testing.T) {
		n, _, f := newTier4Node(t, mode.Tier4, Relay, StateRules{Without: []Card{CardDecodeClaim}})
		g := n.newGroup(f.commit)
		for i := range g.need {
			n.part(g, "m1", f.msgs[i])
		}
		for p, o := range g.outbox {
			if o.claim {
				t.Errorf("a claim queued to %s with the card off", p)
			}
		}
	})
}

func TestTier4WindowHoldsTheBacklog(t *testing.T) {
	n, _, f := newTier4Node(t, mode.Tier4, Relay, StateRules{Window: 2, Without: []Card{CardAim}})
	g := n.newGroup(f.commit)
	now := time.Now()
	for i := range 4 {
		n.part(g, "m1", f.msgs[i])
	}
	n.dispatch(now)
	parts, _ := outbox(g)
	sent := 0
	for _, ps := range parts {
		sent += len(ps)
	}
	if sent != 2 || n.st.window.Used() != 2 {
		t.Fatalf("a window of two wrote %d parts (%d in flight)", sent, n.st.window.Used())
	}
	// One receiver acknowledges (its inventory shows the part): one more
	// goes out.
	var acker peer.ID
	var part int
	for p, ps := range parts {
		acker, part = p, ps[0]
		break
	}
	g.outbox = map[peer.ID]*partialSend{}
	n.control(g, acker, Control{Parts: g.parts, Have: bitsOf(g.parts, part)})
	n.dispatch(now)
	if parts, _ := outbox(g); len(parts) != 1 {
		t.Fatalf("after one acknowledgement wrote %v, want one part", parts)
	}
	// Nobody acknowledges: the slots lapse after the timeout.
	g.outbox = map[peer.ID]*partialSend{}
	n.dispatch(now.Add(DefaultStateRules.AckTimeout))
	if parts, _ := outbox(g); len(parts) == 0 {
		t.Error("nothing written after every slot lapsed")
	}
}

func TestCopyTime(t *testing.T) {
	for _, tc := range []struct {
		size, mbps int
		want       time.Duration
	}{
		{746_262, 50, 119_401_920 * time.Nanosecond}, // the study's whole copy on a home uplink
		{746_262, 1000, 5_970_096 * time.Nanosecond}, // on a datacenter link
		{125_000, 1, time.Second},
		{746_262, 0, 0},
	} {
		if got := copyTime(tc.size, tc.mbps); got != tc.want {
			t.Errorf("copyTime(%d, %d) = %v, want %v", tc.size, tc.mbps, got, tc.want)
		}
	}
}

func TestTier4PacedGossip(t *testing.T) {
	n, _, f := newTier4Node(t, mode.Tier4, Relay, StateRules{})
	g := n.newGroup(f.commit)
	g.held.Set(0)
	g.msgs[0] = f.msgs[0]
	n.onEmitGossip(f.policy.Topic(), g.id, []peer.ID{"g1", "g2", "g3"}, nil)
	n.drain()
	if _, have := outbox(g); len(have) != 1 {
		t.Fatalf("announced to %v at once, want one peer a tick", have)
	}
	if n.st.pacer.queue == nil || len(n.st.pacer.queue) != 2 {
		t.Errorf("%d announcements wait, want 2", len(n.st.pacer.queue))
	}
}

func TestWholePaced(t *testing.T) {
	t.Run("one part completes the payload; every mesh peer is told; at most three copies go out", func(t *testing.T) {
		n, env, f := newTier4Node(t, mode.WholePaced, Relay, StateRules{})
		if len(f.msgs) != 1 {
			t.Fatalf("whole-paced prepared %d messages, want one envelope", len(f.msgs))
		}
		g := n.newGroup(f.commit)
		if g.parts != 1 || g.need != 1 {
			t.Fatalf("group of %d parts needing %d, want 1 and 1", g.parts, g.need)
		}
		n.part(g, "m1", f.msgs[0])
		if env.ev.completed != 1 || !g.done {
			t.Fatalf("completed %d, done %v", env.ev.completed, g.done)
		}
		n.dispatch(time.Now())
		parts, have := outbox(g)
		if len(parts) != wholePacedCopies {
			t.Errorf("%d copies written at once, want %d", len(parts), wholePacedCopies)
		}
		if !slices.Equal(have, phaseMesh) {
			t.Errorf("told %v, want the whole mesh (IDONTWANT, and the acknowledgement to m1)", have)
		}
		// The remaining mesh peer says it holds the payload: its copy is
		// cancelled.
		g.outbox = map[peer.ID]*partialSend{}
		for _, p := range phaseMesh[1:] {
			if _, sent := parts[p]; !sent {
				n.control(g, p, Control{Parts: 1, Have: bitsOf(1, 0)})
			}
		}
		for p := range parts {
			n.control(g, p, Control{Parts: 1, Have: bitsOf(1, 0)})
		}
		n.dispatch(time.Now())
		if parts, _ := outbox(g); len(parts) != 0 {
			t.Errorf("wrote %v to peers that hold the payload", parts)
		}
	})
	t.Run("the source tells its whole mesh it holds the payload, so no copy comes back", func(t *testing.T) {
		f := newFixture(t, mode.WholePaced)
		n, _ := newPhaseNode(t, f, Relay)
		n.publish(f.prep)
		g := n.groups[f.slot]
		if g == nil {
			t.Fatal("publish made no group")
		}
		n.dispatch(time.Now())
		parts, have := outbox(g)
		if len(parts) != wholePacedCopies {
			t.Errorf("%d copies written at once, want %d", len(parts), wholePacedCopies)
		}
		if !slices.Equal(have, phaseMesh) {
			t.Errorf("the source told %v, want its whole mesh %v", have, phaseMesh)
		}
	})
	t.Run("a gossip peer's announcement is asked for, a mesh peer's is not", func(t *testing.T) {
		n, _, f := newTier4Node(t, mode.WholePaced, Relay, StateRules{})
		g := n.newGroup(f.commit)
		n.control(g, "m1", Control{Parts: 1, Have: bitsOf(1, 0)})
		n.control(g, "g1", Control{Parts: 1, Have: bitsOf(1, 0)})
		if o := g.outbox["m1"]; o != nil && o.want != nil {
			t.Error("asked a mesh peer, which pushes")
		}
		if o := g.outbox["g1"]; o == nil || !o.want.Has(0) {
			t.Error("did not ask the gossip peer that announced")
		}
	})
	t.Run("announcements are one copy's time at the uplink apart, unless the tick is set", func(t *testing.T) {
		for _, tc := range []struct {
			name  string
			rules StateRules
			want  func(copy int) time.Duration
		}{
			{"default", StateRules{}, func(copy int) time.Duration { return copyTime(copy, DefaultStateRules.UplinkMbps) }},
			{"set", StateRules{PaceTick: 30 * time.Millisecond}, func(int) time.Duration { return 30 * time.Millisecond }},
		} {
			n, _, f := newTier4Node(t, mode.WholePaced, Relay, tc.rules)
			g := n.newGroup(f.commit)
			n.part(g, "m1", f.msgs[0])
			n.onEmitGossip(f.policy.Topic(), g.id, []peer.ID{"g1", "g2"}, nil)
			n.drain()
			if got, want := n.st.pacer.tick, tc.want(len(f.msgs[0])); got != want {
				t.Errorf("%s: pace tick %v, want %v", tc.name, got, want)
			}
		}
	})
	t.Run("the envelope is verified", func(t *testing.T) {
		n, env, f := newTier4Node(t, mode.WholePaced, Relay, StateRules{})
		g := n.newGroup(f.commit)
		bad := slices.Clone(f.msgs[0])
		bad[len(bad)-1] ^= 0x40
		if err := n.onIncomingRPC("m1", nil, &pb.PartialMessagesExtension{GroupID: g.id, PartialMessage: bad}); err != nil {
			t.Fatal(err)
		}
		n.drain()
		if g.held.Has(0) || len(env.ev.rejected) != 1 {
			t.Errorf("a corrupt envelope: held %v, rejected %v", g.held.Has(0), env.ev.rejected)
		}
	})
}

// A peer that took pushes and reported nothing through the grace period
// is demoted, and starts the next payload demoted until it reports: a
// black hole (a mute node) is not relearned every slot.
func TestTier4DemotionOutlivesThePayload(t *testing.T) {
	n, _, f := newTier4Node(t, mode.Tier4, Relay, StateRules{})
	grace := n.st.rules.Grace
	t0 := time.Now()
	g := n.newGroup(f.commit)
	n.st.peer(g, "m1").firstPush = t0
	n.st.peer(g, "m2").firstPush = t0
	if n.demoted(g, "m1", t0.Add(grace/2)) {
		t.Fatal("demoted within the grace period")
	}
	n.heard(g, "m2", bitsOf(g.parts, 0), false)
	if !n.demoted(g, "m1", t0.Add(grace+time.Millisecond)) {
		t.Fatal("a peer that reported nothing past the grace period is not demoted")
	}
	if n.demoted(g, "m2", t0.Add(grace+time.Millisecond)) {
		t.Fatal("a peer that reported is demoted")
	}
	next := f.commit
	next.Slot++
	g2 := n.newGroup(next)
	if !n.demoted(g2, "m1", time.Now()) {
		t.Error("the silent peer starts the next payload as a fresh peer")
	}
	if n.demoted(g2, "m2", time.Now()) || n.demoted(g2, "m3", time.Now()) {
		t.Error("a peer that reported, or took no push, starts the next payload demoted")
	}
	n.heard(g2, "m1", NewBits(g2.parts), false)
	if n.demoted(g2, "m1", time.Now()) {
		t.Error("still demoted after it reported")
	}
	plain, _, _ := newTier4Node(t, mode.Tier4, Relay, StateRules{Aim: AimPlain})
	pg := plain.newGroup(f.commit)
	plain.st.peer(pg, "m1").firstPush = t0
	if plain.demoted(pg, "m1", t0.Add(2*grace)) {
		t.Error("the plain aim demotes")
	}
}

// A tailored under-reporter acknowledges our pushes and admits to nothing
// else, so it ranks furthest behind for good: the safer aim demotes a peer
// whose inventory, past the grace period, reaches beyond the parts we wrote
// to it by fewer than one in two, and no further within the grace period,
// into the next payload, until it reports two parts beyond our writes or
// sends one. A padding under-reporter, which adds the same part to what we
// sent, is caught once we have written it two parts, whichever part it
// adds; an honest peer that is still getting parts from elsewhere is not.
func TestTier4DemotesAPeerThatEchoesOurPushes(t *testing.T) {
	tests := []struct {
		name string
		// wrote is what we pushed to m1 (parts 0 and 1 when nil), reports
		// what m1 reports after it.
		wrote, reports []int
		// later is a second inventory, before the grace period ends.
		later []int
		// fresh: a part beyond our writes was new half the grace period in.
		fresh bool
		// sends: m1 sends us part 3 as well.
		sends bool
		want  bool
	}{
		{"reports only parts we wrote", nil, []int{0, 1}, nil, false, false, true},
		{"reports one part we wrote", nil, []int{1}, nil, false, false, true},
		{"reports a part from elsewhere", nil, []int{0, 2}, nil, false, false, false},
		{"reports only ours but sent us a part", nil, []int{0}, nil, false, true, false},
		{"pads two of ours by one", nil, []int{0, 1, 7}, nil, false, false, true},
		{"pads two of ours by one, then by another", nil, []int{0, 1, 7}, []int{0, 1, 5}, false, false, true},
		{"pads five of ours by two", []int{0, 1, 2, 3, 4}, []int{0, 1, 2, 3, 4, 7, 8}, nil, false, false, true},
		{"reports three of ours and two from elsewhere, nothing new since", []int{0, 1, 2}, []int{0, 1, 2, 5, 6}, nil, false, false, true},
		{"reports three of ours and two from elsewhere, one new within the grace period", []int{0, 1, 2}, []int{0, 1, 2, 5, 6}, nil, true, false, false},
		{"reports two from elsewhere and none of ours", nil, []int{5, 6}, nil, false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, _, f := newTier4Node(t, mode.Tier4, Relay, StateRules{})
			grace := n.st.rules.Grace
			g := n.newGroup(f.commit)
			t0 := time.Now()
			ps := n.st.peer(g, "m1")
			ps.firstPush = t0
			wrote := tt.wrote
			if wrote == nil {
				wrote = []int{0, 1}
			}
			for _, i := range wrote {
				ps.wrote.Set(i)
			}
			n.heard(g, "m1", bitsOf(g.parts, tt.reports...), false)
			if tt.later != nil {
				n.heard(g, "m1", bitsOf(g.parts, tt.later...), false)
			}
			if tt.fresh {
				ps.grew = t0.Add(grace / 2)
			}
			if tt.sends {
				n.arrivedFrom(g, "m1", 3)
			}
			if n.demoted(g, "m1", t0.Add(grace/2)) {
				t.Fatal("demoted within the grace period")
			}
			if got := n.demoted(g, "m1", t0.Add(grace+time.Millisecond)); got != tt.want {
				t.Fatalf("demoted past the grace period: %v, want %v", got, tt.want)
			}
			next := f.commit
			next.Slot++
			g2 := n.newGroup(next)
			if got := n.demoted(g2, "m1", time.Now()); got != tt.want {
				t.Fatalf("demoted at the next payload's start: %v, want %v", got, tt.want)
			}
			if !tt.want {
				return
			}
			// Its echo of the new payload's pushes keeps it demoted, padded
			// by a part or not; a second part it did not get from us lifts
			// it.
			n.st.peer(g2, "m1").wrote.Set(5)
			n.heard(g2, "m1", bitsOf(g2.parts, 5), false)
			if !n.demoted(g2, "m1", time.Now()) {
				t.Error("an echo of our pushes lifted the demotion")
			}
			n.heard(g2, "m1", bitsOf(g2.parts, 5, 6), false)
			if !n.demoted(g2, "m1", time.Now()) {
				t.Error("an echo padded by one part lifted the demotion")
			}
			n.heard(g2, "m1", bitsOf(g2.parts, 5, 6, 7), false)
			if n.demoted(g2, "m1", time.Now()) {
				t.Error("still demoted after it reported two parts we did not write")
			}
		})
	}
	plain, _, f := newTier4Node(t, mode.Tier4, Relay, StateRules{Aim: AimPlain})
	pg := plain.newGroup(f.commit)
	t0 := time.Now()
	ps := plain.st.peer(pg, "m1")
	ps.firstPush = t0
	ps.wrote.Set(0)
	plain.heard(pg, "m1", bitsOf(pg.parts, 0), false)
	if plain.demoted(pg, "m1", t0.Add(2*plain.st.rules.Grace)) {
		t.Error("the plain aim demotes")
	}
}

// A peer that asks for parts and acknowledges none of our answers (a mute
// node) is found out once our first copy to it has had AckTimeout to be
// acknowledged: from then its answers wait behind every other peer's, one
// in flight at a time, so that half a network of them cannot hold the
// node's window. A far peer that acknowledges late, within AckTimeout, is
// not marked.
func TestTier4AnswersToAnUnacknowledgingPeerWait(t *testing.T) {
	n, _, f := newTier4Node(t, mode.Tier4, Relay, StateRules{Without: []Card{CardAim}})
	g := n.newGroup(f.commit)
	for i := range 4 {
		n.part(g, "src", f.msgs[i])
	}
	t0 := time.Now()
	lapse := n.st.rules.AckTimeout
	n.dispatch(t0) // the pushes of the four parts
	g.outbox = map[peer.ID]*partialSend{}
	n.control(g, "mute", Control{Parts: g.parts, Want: bitsOf(g.parts, 0)})
	n.control(g, "far", Control{Parts: g.parts, Want: bitsOf(g.parts, 0)})
	n.dispatch(t0)
	if parts, _ := outbox(g); !slices.Equal(parts["mute"], []int{0}) || !slices.Equal(parts["far"], []int{0}) {
		t.Fatalf("first requests went unanswered: %v", parts)
	}
	// Past the aim's grace period, within AckTimeout, neither is marked;
	// then the far peer acknowledges.
	if n.unacknowledging(g, "mute", t0.Add(lapse-time.Millisecond)) || n.unacknowledging(g, "far", t0.Add(n.st.rules.Grace+time.Millisecond)) {
		t.Fatal("unacknowledging within AckTimeout")
	}
	n.heard(g, "far", bitsOf(g.parts, 0), false)
	// AckTimeout on: the mute peer asks for the rest, and two honest
	// peers ask after it.
	later := t0.Add(lapse)
	g.outbox = map[peer.ID]*partialSend{}
	n.control(g, "mute", Control{Parts: g.parts, Want: bitsOf(g.parts, 1, 2, 3)})
	n.control(g, "honest", Control{Parts: g.parts, Want: bitsOf(g.parts, 1, 2, 3)})
	n.control(g, "far", Control{Parts: g.parts, Want: bitsOf(g.parts, 1)})
	n.dispatch(later)
	if !n.unacknowledging(g, "mute", later) {
		t.Fatal("the mute peer is not unacknowledging after AckTimeout")
	}
	parts, _ := outbox(g)
	if !slices.Equal(parts["honest"], []int{1, 2, 3}) || !slices.Equal(parts["far"], []int{1}) {
		t.Errorf("the honest peers got %v and %v, want parts 1, 2, 3 and 1", parts["honest"], parts["far"])
	}
	// Its first answer lapsed and nothing else waits: one more answer, and
	// no second until that one lapses.
	if len(parts["mute"]) != 1 {
		t.Errorf("the mute peer got %v, want one part", parts["mute"])
	}
	g.outbox = map[peer.ID]*partialSend{}
	n.dispatch(later.Add(lapse / 2))
	if parts, _ := outbox(g); len(parts["mute"]) != 0 {
		t.Errorf("the mute peer got %v while its answer is in flight", parts["mute"])
	}
	n.dispatch(later.Add(lapse))
	if parts, _ := outbox(g); len(parts["mute"]) != 1 {
		t.Errorf("after its answer lapsed the mute peer got %v, want one more part", parts["mute"])
	}
	// The mark outlives the payload, until the peer reports.
	next := f.commit
	next.Slot++
	g2 := n.newGroup(next)
	if !n.unacknowledging(g2, "mute", time.Now()) {
		t.Error("the mute peer starts the next payload unmarked")
	}
	n.heard(g2, "mute", NewBits(g2.parts), false)
	if n.unacknowledging(g2, "mute", time.Now()) {
		t.Error("still unacknowledging after it reported")
	}
}

// A peer that left our request unanswered (a silent node: it reports what
// it took and passes nothing on) is demoted until a part arrives from it.
func TestTier4DemotesAnUnansweringPeer(t *testing.T) {
	n, _, f := newTier4Node(t, mode.Tier4, Relay, StateRules{})
	g := n.newGroup(f.commit)
	t0 := time.Now()
	key := partKey{g.slot, 0}
	if !n.ledger.Announced(key, "m1", t0) {
		t.Fatal("the first announcer is not asked")
	}
	n.ledger.Announced(key, "m2", t0)
	if n.demoted(g, "m1", t0) {
		t.Fatal("demoted while its request is outstanding")
	}
	r := n.ledger.Rules()
	late := t0.Add(r.Delay + r.Window + time.Millisecond)
	if next := n.ledger.Due(late); next[key] != "m2" {
		t.Fatalf("the lapsed request moved to %v, want m2", next)
	}
	if !n.demoted(g, "m1", late) {
		t.Fatal("a peer that left a request unanswered is not demoted")
	}
	// Past the ledger's ban it stays demoted, into the next payload.
	after := late.Add(r.Ban + time.Second)
	next := f.commit
	next.Slot++
	g2 := n.newGroup(next)
	if !n.demoted(g2, "m1", after) {
		t.Error("the unanswering peer is forgiven when its ban ends")
	}
	n.heard(g2, "m1", bitsOf(g2.parts, 0), false)
	if !n.demoted(g2, "m1", after) {
		t.Error("an inventory alone lifts the demotion (a silent node reports)")
	}
	n.arrivedFrom(g2, "m1", 0)
	if n.demoted(g2, "m1", after) {
		t.Error("still demoted after a part arrived from it")
	}
}

// Announcements that arrive while the request budget is spent on peers
// that never answer are kept as offers and asked once those requests
// lapse: an honest peer announces a part once, and a node whose requests
// all went to silent peers was stranded for good.
func TestTier4AsksKeptOffersWhenRequestsLapse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, mode.Tier4)
		p, err := New(mode.Tier4, Options{SegmentSize: 2048, Pulls: PullRules{Delay: -1, Window: 200 * time.Millisecond}})
		if err != nil {
			t.Fatal(err)
		}
		f.policy = p
		n, _ := newPhaseNode(t, f, Relay)
		g := n.newGroup(f.commit)
		all := NewBits(g.parts)
		for i := range g.parts {
			all.Set(i)
		}
		// g1 (silent) announces everything: the whole budget goes to it.
		n.control(g, "g1", Control{Parts: g.parts, Have: all})
		if n.outstanding(g) != g.need {
			t.Fatalf("%d requests outstanding, want the budget %d", n.outstanding(g), g.need)
		}
		// g2 (honest) announces everything once, while the budget is spent.
		n.control(g, "g2", Control{Parts: g.parts, Have: all})
		g.outbox = map[peer.ID]*partialSend{}
		time.Sleep(250 * time.Millisecond)
		synctest.Wait()
		n.drain()
		want := g.outbox["g2"]
		if want == nil || want.want.Count() != g.need {
			t.Fatalf("after the requests to g1 lapsed, g2 was asked for %v, want %d parts", want, g.need)
		}
	})
}

// A peer that claimed a decode of the last payload or this one is judged
// by the first echo rule only (nothing beyond our writes): honest peers
// claim every payload they rebuild, and neither kind of under-reporter
// ever does. A claim also lifts a demotion, which would otherwise outlive
// a payload too small for two parts beyond our writes.
func TestTier4EchoRuleSparesClaimingPeers(t *testing.T) {
	tests := []struct {
		name string
		// claimedBack is how many slots before this payload m1 claimed a
		// decode (-1: never).
		claimedBack int
		reports     []int
		want        bool
	}{
		{"never claimed, pads our two parts by one", -1, []int{0, 1, 7}, true},
		{"claimed the last payload, the same reports", 1, []int{0, 1, 7}, false},
		{"claimed two payloads ago, the same reports", 2, []int{0, 1, 7}, true},
		{"claimed the last payload, reports only ours", 1, []int{0, 1}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, _, f := newTier4Node(t, mode.Tier4, Relay, StateRules{})
			grace := n.st.rules.Grace
			if tt.claimedBack >= 0 {
				past := f.commit
				past.Slot -= uint64(tt.claimedBack)
				n.heard(n.newGroup(past), "m1", nil, true)
			}
			g := n.newGroup(f.commit)
			t0 := time.Now()
			ps := n.st.peer(g, "m1")
			ps.firstPush = t0
			ps.wrote.Set(0)
			ps.wrote.Set(1)
			n.heard(g, "m1", bitsOf(g.parts, tt.reports...), false)
			if got := n.demoted(g, "m1", t0.Add(grace+time.Millisecond)); got != tt.want {
				t.Fatalf("demoted past the grace period: %v, want %v", got, tt.want)
			}
			if !tt.want {
				return
			}
			n.heard(g, "m1", nil, true)
			if n.demoted(g, "m1", t0.Add(2*grace)) {
				t.Error("still demoted after its decode claim")
			}
		})
	}
}
