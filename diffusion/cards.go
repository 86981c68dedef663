package diffusion

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Card names one of tier 4's local rules (the design's cards 8–17). Each can
// be switched off (StateRules.Without), as the design measured each by
// removing it.
type Card string

// Tier 4's cards, in the design's order.
const (
	// CardCancel: a queued push or answer to a peer whose bitmap now shows
	// the part (or whose decode claim arrived) is dropped before it is
	// written.
	CardCancel Card = "cancel"
	// CardRarest: the next part to push is the one fewest known peers hold.
	CardRarest Card = "rarest"
	// CardDecodeClaim: a node that can rebuild says so at once, and nobody
	// pushes to it.
	CardDecodeClaim Card = "decode-claim"
	// CardPushBudget: each new part is pushed to two mesh peers. Off, a
	// node pushes to the prototype's width for a 1 MiB payload (three):
	// tiers 2 and 3 here already push to two.
	CardPushBudget Card = "push-budget"
	// CardProjection: pushes already queued to a peer count as held when
	// ranking peers and parts.
	CardProjection Card = "projection"
	// CardStripe: a source whose uplink clears StateRules.StripeUplinkMbps
	// spreads its first copies over every connection, each peer a
	// different stripe.
	CardStripe Card = "stripe"
	// CardWindow: a static window of parts in flight per node, sized from
	// the node's uplink and a typical round trip; the backlog waits in the
	// policy's queue, where cancel, rarest and projection still act.
	CardWindow Card = "window"
	// CardPace: announcements to gossip (non-mesh) peers go out one peer a
	// tick instead of all at once at the heartbeat.
	CardPace Card = "pace"
	// CardAim: push to the mesh peers furthest behind (StateRules.Aim: the
	// safer form by default).
	CardAim Card = "aim"
	// CardFastPush: forwarders on a fast uplink push each new part to six
	// peers instead of two.
	CardFastPush Card = "fast-push"
)

// Cards lists every card in the design's order.
func Cards() []Card {
	return []Card{CardCancel, CardRarest, CardDecodeClaim, CardPushBudget, CardProjection, CardStripe, CardWindow, CardPace, CardAim, CardFastPush}
}

// ParseCards reads a comma-separated list of card names ("" is none).
func ParseCards(s string) ([]Card, error) {
	var out []Card
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		c := Card(f)
		if !slices.Contains(Cards(), c) {
			names := make([]string, 0, len(Cards()))
			for _, k := range Cards() {
				names = append(names, string(k))
			}
			return nil, fmt.Errorf("unknown card %q (want some of %s)", f, strings.Join(names, ", "))
		}
		if slices.Contains(out, c) {
			return nil, fmt.Errorf("card %q named twice", f)
		}
		out = append(out, c)
	}
	return out, nil
}

// Aim is the furthest-behind rule's form.
type Aim string

// The furthest-behind rule's forms.
const (
	// AimSafer picks at random among the lower half of the ranking and
	// demotes a peer that took pushes but reported nothing, or an
	// inventory reaching little beyond what we wrote to it (fewer than one
	// part in two, and no further for StateRules.Grace; for a peer that
	// claimed a decode of the last payload, nothing beyond), after
	// StateRules.Grace: a tailored under-reporter, which admits to each
	// pusher only what that pusher sent, padded or not, is ranked last
	// once found out.
	AimSafer Aim = "safer"
	// AimPlain always pushes to the peers holding fewest parts: a tailored
	// under-reporter draws most pushes.
	AimPlain Aim = "plain"
)

// StateRules are tier 4's parameters; zero fields take the defaults named
// per field (DefaultStateRules).
type StateRules struct {
	// Without lists the cards switched off.
	Without []Card
	// Aim is the furthest-behind rule's form (AimSafer).
	Aim Aim
	// PushBudget is how many mesh peers get each new part (2), and
	// FastPushBudget how many when the node's uplink is at least
	// FastUplinkMbps (6 at 200 Mbps).
	PushBudget     int
	FastPushBudget int
	FastUplinkMbps int
	// StripeUplinkMbps is the source uplink from which it stripes its first
	// copies over every connection (200 Mbps: a datacenter builder does, a
	// home one does not).
	StripeUplinkMbps int
	// RTT is the round trip the window is sized for: the window holds
	// uplink × RTT bytes of parts in flight (50 ms). Shorter than the
	// five-region model's mean round trip (about 112 ms) because an
	// acknowledgement often returns sooner: the receiver acknowledges a
	// part once it holds it, from whichever sender. 100 nodes of the study
	// network, seeds 7–9: 20 / 30 / 50 / 120 ms gave a p99 of 0.83 / 0.59 /
	// 0.53 / 0.54 s at 1.64 / 1.75 / 1.84 / 2.09 copies (diffusion/README.md).
	RTT time.Duration
	// Window, when positive, is the window in parts instead (whole-paced:
	// three copies).
	Window int
	// AckTimeout is how long a part stays in flight without the receiver's
	// acknowledgement before its window slot is freed (400 ms).
	AckTimeout time.Duration
	// PaceTick is the interval between two paced announcements (20 ms;
	// whole-paced, when it is not set: one copy's time at the node's
	// uplink).
	PaceTick time.Duration
	// Grace is how long a peer that took pushes may report nothing, or
	// little beyond what we wrote to it, before the safer aim demotes it
	// (300 ms).
	Grace time.Duration
	// UplinkMbps is the node's uplink when its Env cannot tell (50: a home
	// link).
	UplinkMbps int
	// CappedSource: the source pushes its first copies and announces to
	// nobody; other nodes serve the requests.
	CappedSource bool
}

// DefaultStateRules are the defaults named in StateRules.
var DefaultStateRules = StateRules{
	Aim: AimSafer, PushBudget: 2, FastPushBudget: 6, FastUplinkMbps: 200, StripeUplinkMbps: 200,
	RTT: 50 * time.Millisecond, AckTimeout: 400 * time.Millisecond, PaceTick: 20 * time.Millisecond,
	Grace: 300 * time.Millisecond, UplinkMbps: 50,
}

func (r StateRules) withDefaults() StateRules {
	d := DefaultStateRules
	d.Without, d.CappedSource, d.Window = r.Without, r.CappedSource, r.Window
	if r.Aim != "" {
		d.Aim = r.Aim
	}
	setPositive(&d.PushBudget, r.PushBudget)
	setPositive(&d.FastPushBudget, r.FastPushBudget)
	setPositive(&d.FastUplinkMbps, r.FastUplinkMbps)
	setPositive(&d.StripeUplinkMbps, r.StripeUplinkMbps)
	setPositive(&d.UplinkMbps, r.UplinkMbps)
	setPositive(&d.RTT, r.RTT)
	setPositive(&d.AckTimeout, r.AckTimeout)
	setPositive(&d.PaceTick, r.PaceTick)
	setPositive(&d.Grace, r.Grace)
	return d
}

func setPositive[T int | time.Duration](dst *T, v T) {
	if v > 0 {
		*dst = v
	}
}

// check reports the first invalid field, by its Options name.
func (r StateRules) check() *OptionError {
	for _, c := range r.Without {
		if !slices.Contains(Cards(), c) {
			_, err := ParseCards(string(c))
			return &OptionError{"State.Without", err}
		}
	}
	switch {
	case r.Aim != "" && r.Aim != AimSafer && r.Aim != AimPlain:
		return &OptionError{"State.Aim", fmt.Errorf("%q, want %s or %s", r.Aim, AimSafer, AimPlain)}
	case r.Window < 0:
		return &OptionError{"State.Window", fmt.Errorf("%d, want >= 0 (0: sized from the uplink)", r.Window)}
	case r.PushBudget < 0 || r.FastPushBudget < 0:
		return &OptionError{"State.PushBudget", fmt.Errorf("%d / %d, want >= 0", r.PushBudget, r.FastPushBudget)}
	case r.RTT < 0 || r.AckTimeout < 0 || r.PaceTick < 0 || r.Grace < 0:
		return &OptionError{"State", fmt.Errorf("negative duration in %+v", r)}
	case r.UplinkMbps < 0 || r.FastUplinkMbps < 0 || r.StripeUplinkMbps < 0:
		return &OptionError{"State.UplinkMbps", fmt.Errorf("negative rate in %+v", r)}
	}
	return nil
}

// cardSet is the cards a node plays.
type cardSet map[Card]bool

func newCardSet(on []Card, without []Card) cardSet {
	s := cardSet{}
	for _, c := range on {
		if !slices.Contains(without, c) {
			s[c] = true
		}
	}
	return s
}
