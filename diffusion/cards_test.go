package diffusion

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
)

// Tier 4's cards, each in isolation.

// noneSent is a popRules.sent that has written nothing.
func noneSent(uint64, int, peer.ID) bool { return false }

// firstPeer is a popRules.aim that takes the first eligible peer.
func firstPeer(_ uint64, _ int, eligible []peer.ID) peer.ID { return eligible[0] }

func TestCancelAtDispatch(t *testing.T) {
	holds := map[peer.ID]map[int]bool{}
	unwanted := func(_ uint64, part int, p peer.ID) bool { return holds[p][part] }
	tests := []struct {
		name    string
		cancel  bool
		report  map[peer.ID][]int // what peers report after the push was queued
		want    []queuedSend      // what pop returns, in order
		dropped int
	}{
		{name: "nothing reported", cancel: true,
			want: []queuedSend{{to: "a", part: 1}, {to: "b", part: 1}}},
		// The ticket's second copy has nobody left to go to: dropped.
		{name: "one target reported the part", cancel: true, report: map[peer.ID][]int{"a": {1}},
			want: []queuedSend{{to: "b", part: 1}}, dropped: 1},
		{name: "every target reported the part", cancel: true, report: map[peer.ID][]int{"a": {1}, "b": {1}},
			dropped: 1},
		{name: "another part reported", cancel: true, report: map[peer.ID][]int{"a": {2}},
			want: []queuedSend{{to: "a", part: 1}, {to: "b", part: 1}}},
		{name: "card off: the reports are not read", cancel: false, report: map[peer.ID][]int{"a": {1}, "b": {1}},
			want: []queuedSend{{to: "a", part: 1}, {to: "b", part: 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clear(holds)
			var q sendQueue
			q.push(pushTicket{part: 1, budget: 2, peers: []peer.ID{"a", "b"}})
			for p, parts := range tt.report {
				holds[p] = map[int]bool{}
				for _, i := range parts {
					holds[p][i] = true
				}
			}
			written := map[peer.ID]bool{}
			r := popRules{sent: func(_ uint64, _ int, p peer.ID) bool { return written[p] }, aim: firstPeer}
			if tt.cancel {
				r.unwanted = unwanted
			}
			var got []queuedSend
			dropped := 0
			for {
				s, ok := q.pop(r, func(queuedSend) { dropped++ })
				if !ok {
					break
				}
				written[s.to] = true
				got = append(got, s)
			}
			if !slices.Equal(got, tt.want) || dropped != tt.dropped {
				t.Errorf("popped %v, dropped %d; want %v, %d", got, dropped, tt.want, tt.dropped)
			}
		})
	}
	t.Run("answers", func(t *testing.T) {
		var q sendQueue
		q.answer(queuedSend{to: "a", part: 3})
		q.answer(queuedSend{to: "b", part: 3})
		holds := map[peer.ID]bool{"a": true}
		dropped := 0
		s, ok := q.pop(popRules{sent: noneSent, aim: firstPeer, unwanted: func(_ uint64, _ int, p peer.ID) bool { return holds[p] }},
			func(queuedSend) { dropped++ })
		if !ok || s.to != "b" || !s.answer || dropped != 1 {
			t.Errorf("pop = %+v, %v (dropped %d); want the answer to b, the one to a dropped", s, ok, dropped)
		}
	})
}

func TestRarestAtPop(t *testing.T) {
	holders := map[int]int{0: 5, 1: 2, 2: 7, 3: 2}
	tests := []struct {
		name   string
		rarest bool
		want   []int
	}{
		// Ties keep queue order.
		{name: "rarest first", rarest: true, want: []int{1, 3, 0, 2}},
		{name: "card off: queue order", rarest: false, want: []int{0, 1, 2, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var q sendQueue
			for i := range 4 {
				q.push(pushTicket{part: i, budget: 1, peers: []peer.ID{"a"}})
			}
			r := popRules{sent: noneSent, aim: firstPeer}
			if tt.rarest {
				r.rarity = func(_ uint64, part int) int { return holders[part] }
			}
			var got []int
			for {
				s, ok := q.pop(r, func(queuedSend) {})
				if !ok {
					break
				}
				got = append(got, s.part)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("popped parts %v, want %v", got, tt.want)
			}
		})
	}
	t.Run("the budget spends a part's copies one pop at a time", func(t *testing.T) {
		var q sendQueue
		q.push(pushTicket{part: 0, budget: 2, peers: []peer.ID{"a", "b", "c"}})
		q.push(pushTicket{part: 1, budget: 2, peers: []peer.ID{"a", "b", "c"}})
		held := map[int]int{}
		written := map[string]bool{}
		r := popRules{
			sent:   func(_ uint64, part int, p peer.ID) bool { return written[fmt.Sprint(part, string(p))] },
			rarity: func(_ uint64, part int) int { return held[part] },
			aim:    firstPeer,
		}
		var got []string
		for {
			s, ok := q.pop(r, func(queuedSend) {})
			if !ok {
				break
			}
			held[s.part]++ // projection: a written copy counts as held
			written[fmt.Sprint(s.part, string(s.to))] = true
			got = append(got, fmt.Sprint(s.part, string(s.to)))
		}
		// First copies of both parts before a second of either, and never
		// the same part twice to a peer.
		if want := []string{"0a", "1a", "0b", "1b"}; !slices.Equal(got, want) {
			t.Errorf("popped %v, want %v", got, want)
		}
	})
}

// Answers to a peer that acknowledges nothing wait behind every other
// answer and push, and go out only while the rules leave them room; the
// answers to other peers keep their order.
func TestPopDefersAnswersToUnacknowledgingPeers(t *testing.T) {
	tests := []struct {
		name string
		room bool
		want []string
	}{
		{name: "room: the mute peer's answers last, in order", room: true, want: []string{"0a", "2a", "1b", "0m", "1m"}},
		{name: "no room: the mute peer's answers wait", room: false, want: []string{"0a", "2a", "1b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var q sendQueue
			q.answer(queuedSend{to: "m", part: 0})
			q.answer(queuedSend{to: "a", part: 0})
			q.answer(queuedSend{to: "m", part: 1})
			q.answer(queuedSend{to: "a", part: 2})
			q.push(pushTicket{part: 1, budget: 1, peers: []peer.ID{"b"}})
			r := popRules{sent: noneSent, aim: firstPeer,
				deferred:     func(_ uint64, p peer.ID) bool { return p == "m" },
				deferredRoom: func() bool { return tt.room },
			}
			var got []string
			for {
				s, ok := q.pop(r, func(queuedSend) {})
				if !ok {
					break
				}
				got = append(got, fmt.Sprint(s.part, string(s.to)))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("popped %v, want %v", got, tt.want)
			}
			if wantLeft := 5 - len(tt.want); q.Len() != wantLeft {
				t.Errorf("%d left queued, want %d", q.Len(), wantLeft)
			}
		})
	}
}

func TestWindowBound(t *testing.T) {
	now := time.Unix(0, 0)
	tests := []struct {
		name     string
		capacity int
		weight   func(i int) int
		bound    int // the most weight ever in flight
	}{
		{name: "copies: never more than the capacity", capacity: 3, weight: func(int) int { return 1 }, bound: 3},
		{name: "bytes: below the capacity plus the heaviest part", capacity: 750_000,
			weight: func(i int) int { return 20_000 + 977*(i%11) }, bound: 750_000 + 20_000 + 977*10 - 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := NewWindow(tt.capacity, 400*time.Millisecond)
			rng := rand.New(rand.NewPCG(1, 2))
			admitted := 0
			for i := range 100_000 {
				// A flood: every step offers a part; now and then an
				// acknowledgement or a lapse frees a few.
				p := peer.ID(fmt.Sprint(rng.IntN(8)))
				if w.Add(p, 1, i, tt.weight(i), now) {
					admitted++
				}
				if w.Used() > tt.bound {
					t.Fatalf("after %d offers: %d in flight, bound %d", i+1, w.Used(), tt.bound)
				}
				switch rng.IntN(10) {
				case 0:
					w.Ack(p, 1, func(int) bool { return true })
				case 1:
					now = now.Add(100 * time.Millisecond)
					w.Expire(now)
				}
			}
			if admitted == 0 {
				t.Fatal("nothing admitted")
			}
		})
	}
	t.Run("acknowledgement, lapse and slot", func(t *testing.T) {
		w := NewWindow(2, 400*time.Millisecond)
		if !w.Add("a", 1, 0, 1, now) || !w.Add("b", 1, 0, 1, now) || w.Add("c", 1, 0, 1, now) {
			t.Fatal("a window of two admitted other than two")
		}
		if k := w.Ack("a", 1, func(part int) bool { return part == 1 }); k != 0 || w.Room() {
			t.Fatalf("an acknowledgement of another part freed %d", k)
		}
		if k := w.Ack("a", 1, func(part int) bool { return part == 0 }); k != 1 || !w.Room() {
			t.Fatalf("the acknowledgement freed %d", k)
		}
		if next, ok := w.NextLapse(); !ok || !next.Equal(now.Add(400*time.Millisecond)) {
			t.Fatalf("NextLapse = %v, %v", next, ok)
		}
		if k := w.Expire(now.Add(399 * time.Millisecond)); k != 0 {
			t.Fatalf("expired %d before the timeout", k)
		}
		if k := w.Expire(now.Add(400 * time.Millisecond)); k != 1 || w.Used() != 0 {
			t.Fatalf("expired %d at the timeout, %d left", k, w.Used())
		}
		w.Add("a", 1, 0, 1, now)
		w.Add("a", 2, 0, 1, now)
		w.Forget(1)
		if w.Used() != 1 {
			t.Fatalf("forgetting slot 1 left %d in flight, want slot 2's one", w.Used())
		}
	})
}

func TestAimSaferNeverGivesAnUnderReporterEveryContestedPush(t *testing.T) {
	// An under-reporter tells each pusher it holds only what that pusher
	// sent: it always ranks furthest behind. Six candidates, two pushes
	// each round.
	cands := func() []aimCandidate {
		return []aimCandidate{{peer: "u", held: 0}, {peer: "a", held: 9}, {peer: "b", held: 10}, {peer: "c", held: 12},
			{peer: "d", held: 14}, {peer: "e", held: 20}}
	}
	const rounds = 3000
	tests := []struct {
		form          Aim
		minU, maxU    float64 // the under-reporter's share of the rounds
		neverUpperTop bool    // the two peers holding most never chosen
	}{
		// Plain: the under-reporter draws every push.
		{form: AimPlain, minU: 1, maxU: 1},
		// Safer: two of the lower half (three peers) at random: 2/3.
		{form: AimSafer, minU: 0.6, maxU: 0.73, neverUpperTop: true},
	}
	for _, tt := range tests {
		t.Run(string(tt.form), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 7))
			u := 0
			for range rounds {
				got := aimTargets(cands(), 2, tt.form, rng)
				if len(got) != 2 {
					t.Fatalf("aimTargets gave %v, want two peers", got)
				}
				if slices.Contains(got, "u") {
					u++
				}
				if tt.neverUpperTop && (slices.Contains(got, "d") || slices.Contains(got, "e")) {
					t.Fatalf("the safer rule pushed to the upper half: %v", got)
				}
			}
			if share := float64(u) / rounds; share < tt.minU || share > tt.maxU {
				t.Errorf("the under-reporter took %.2f of the contested pushes, want %.2f..%.2f", share, tt.minU, tt.maxU)
			}
		})
	}
	t.Run("a demoted peer comes last", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 1))
		for range 200 {
			c := cands()
			c[0].demoted = true
			if got := aimTargets(c, 2, AimSafer, rng); slices.Contains(got, "u") {
				t.Fatalf("a demoted under-reporter was pushed to: %v", got)
			}
		}
		c := []aimCandidate{{peer: "u", demoted: true}, {peer: "a", held: 3}}
		if got := aimTargets(c, 2, AimSafer, rng); !slices.Equal(got, []peer.ID{"a", "u"}) {
			t.Errorf("with too few others, the demoted peer fills the budget last: got %v", got)
		}
	})
}

func TestPacedGossipOneAnnouncementATick(t *testing.T) {
	tick := 20 * time.Millisecond
	p := newPacer(tick)
	now := time.Unix(0, 0)
	for i := range 12 {
		p.add(1, peer.ID(fmt.Sprint("g", i)))
	}
	p.add(1, "g3") // already waiting: not twice
	sent := map[time.Duration][]peer.ID{}
	var order []peer.ID
	// Drive the pacer at a step finer than the tick, as a busy loop would.
	for step := time.Duration(0); step < 2*time.Second; step += time.Millisecond {
		a, ok, _ := p.next(now.Add(step))
		if ok {
			k := step / tick
			sent[k] = append(sent[k], a.to)
			order = append(order, a.to)
		}
	}
	for k, ps := range sent {
		if len(ps) > 1 {
			t.Errorf("tick %d announced to %v: two peers in one tick", k, ps)
		}
	}
	if len(order) != 12 {
		t.Fatalf("announced to %d peers, want 12 (each once): %v", len(order), order)
	}
	if _, ok, retry := p.next(now.Add(time.Hour)); ok || !retry.IsZero() {
		t.Error("an empty pacer announced or asked to be called again")
	}
	p.add(2, "x")
	p.add(3, "y")
	p.forget(2)
	if a, ok, _ := p.next(now.Add(2 * time.Hour)); !ok || a.slot != 3 {
		t.Errorf("after forgetting slot 2: %+v, %v; want slot 3's announcement", a, ok)
	}
}

func TestStripes(t *testing.T) {
	peers := func(n int) []peer.ID {
		out := make([]peer.ID, n)
		for i := range out {
			out[i] = peer.ID(fmt.Sprint("p", i))
		}
		return out
	}
	tests := []struct {
		parts, peers int
		perPeer      []int // parts per peer, by peer index
	}{
		{parts: 64, peers: 70, perPeer: nil}, // every peer one part
		{parts: 64, peers: 16, perPeer: nil}, // every peer four
		{parts: 10, peers: 4},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d parts over %d peers", tt.parts, tt.peers), func(t *testing.T) {
			ps := peers(tt.peers)
			got := stripes(tt.parts, ps)
			covered := map[int]int{}
			seen := map[string]bool{}
			lo, hi := tt.parts, 0
			for _, p := range ps {
				s := got[p]
				if len(s) == 0 {
					t.Fatalf("peer %s got no stripe", p)
				}
				lo, hi = min(lo, len(s)), max(hi, len(s))
				for _, i := range s {
					covered[i]++
				}
				if tt.peers <= tt.parts {
					key := fmt.Sprint(s)
					if seen[key] {
						t.Errorf("two peers share the stripe %v", s)
					}
					seen[key] = true
				}
			}
			if len(covered) != tt.parts {
				t.Errorf("%d of %d parts go out", len(covered), tt.parts)
			}
			if hi-lo > 1 {
				t.Errorf("stripes of %d to %d parts: want them within one of each other", lo, hi)
			}
		})
	}
}

func TestParseCards(t *testing.T) {
	tests := []struct {
		in      string
		want    []Card
		wantErr string
	}{
		{in: "", want: nil},
		{in: "cancel, rarest", want: []Card{CardCancel, CardRarest}},
		{in: "window,pace,", want: []Card{CardWindow, CardPace}},
		{in: "rarst", wantErr: `unknown card "rarst"`},
		{in: "aim,aim", wantErr: `card "aim" named twice`},
	}
	for _, tt := range tests {
		got, err := ParseCards(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseCards(%q) = %v, %v; want an error with %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("ParseCards(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}
