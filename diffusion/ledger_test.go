package diffusion_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/segdiff/segdiff/diffusion"
)

var t0 = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

func ms(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }

// A ledger never has two requests for one item outstanding, however many
// peers announce it.
func TestLedgerNeverAsksTwice(t *testing.T) {
	l := diffusion.NewLedger[string](diffusion.PullRules{Window: 200 * time.Millisecond})
	asks := 0
	for i := range 50 {
		if l.Announced("seg-3", peer.ID(fmt.Sprintf("p%02d", i)), ms(i)) {
			asks++
		}
	}
	if asks != 1 {
		t.Fatalf("%d requests for one item, want 1", asks)
	}
	if got := l.Offers("seg-3"); got != 8 {
		t.Errorf("offer table holds %d announcers, want the bound 8", got)
	}
	// The same peer announcing again is neither asked again nor an offer.
	if l.Announced("seg-3", "p00", ms(60)) {
		t.Error("asked the outstanding peer a second time")
	}
	l.Arrived("seg-3")
	if l.Announced("seg-3", "p99", ms(300)) {
		t.Error("asked for an item that arrived")
	}
	if due := l.Due(ms(1000)); len(due) != 0 {
		t.Errorf("an arrived item came due: %v", due)
	}
}

// After the window the next announcer is asked and the lapsed peer is
// banned: it is not asked for anything until the ban ends.
func TestLedgerMovesOnAndBans(t *testing.T) {
	l := diffusion.NewLedger[int](diffusion.PullRules{Window: 200 * time.Millisecond, Delay: -1, Ban: time.Second})
	if !l.Announced(1, "a", ms(0)) {
		t.Fatal("first announcer not asked")
	}
	l.Announced(1, "b", ms(10))
	l.Announced(1, "c", ms(20))
	if due := l.Due(ms(199)); len(due) != 0 {
		t.Fatalf("moved on before the window: %v", due)
	}
	due := l.Due(ms(200))
	if due[1] != "b" {
		t.Fatalf("after the window asked %v, want b (the next announcer)", due)
	}
	if p, _ := l.Asked(1); p != "b" || !l.Banned("a", ms(200)) {
		t.Fatalf("outstanding %q, a banned %v", p, l.Banned("a", ms(200)))
	}
	// a is banned: its announcement of another item waits as an offer.
	if l.Announced(2, "a", ms(300)) {
		t.Error("asked a banned peer")
	}
	if !l.Announced(2, "d", ms(310)) {
		t.Error("an unbanned announcer of a fresh item was not asked")
	}
	// b lapses too; c is next, then nothing is left: the item waits.
	if due := l.Due(ms(400)); due[1] != "c" {
		t.Fatalf("second move-on asked %v, want c", due)
	}
	if due := l.Due(ms(600)); len(due) != 0 {
		t.Fatalf("asked %v with no offer left", due)
	}
	if !l.Announced(1, "e", ms(650)) {
		t.Error("a new announcer of a waiting item was not asked")
	}
	if l.Banned("a", ms(1200)) {
		t.Error("ban outlived its second")
	}
}

// The ledger's state stays bounded under a flood of fabricated ids.
func TestLedgerBoundedUnderFlood(t *testing.T) {
	l := diffusion.NewLedger[string](diffusion.PullRules{Items: 1000, Offers: 4})
	for i := range 100_000 {
		l.Announced(fmt.Sprintf("fake-%d", i), peer.ID(fmt.Sprintf("p%d", i%97)), ms(i/100))
	}
	if l.Len() != 1000 {
		t.Fatalf("ledger tracks %d items, want its bound 1000", l.Len())
	}
	l.Forget(func(string) bool { return false })
	if l.Len() != 0 {
		t.Fatalf("Forget left %d items", l.Len())
	}
}

// With a pull delay the request goes out after it, so the window runs from
// then: the move-on comes delay + window after the first announcement.
func TestLedgerDelayShiftsTheWindow(t *testing.T) {
	l := diffusion.NewLedger[int](diffusion.PullRules{Window: 200 * time.Millisecond, Delay: 100 * time.Millisecond})
	l.Announced(1, "a", ms(0))
	l.Announced(1, "b", ms(10))
	if due := l.Due(ms(299)); len(due) != 0 {
		t.Fatalf("moved on at 299 ms: %v", due)
	}
	if due := l.Due(ms(300)); due[1] != "b" {
		t.Fatalf("at 300 ms asked %v, want b", due)
	}
	if d := diffusion.NewLedger[int](diffusion.PullRules{}).Rules().Delay; d != 100*time.Millisecond {
		t.Errorf("default delay %v, want 100ms", d)
	}
}

// An offer is kept without a request; AskOffer asks the oldest announcer
// not banned, only while nothing is outstanding, and never an arrived item.
func TestLedgerOfferThenAsk(t *testing.T) {
	l := diffusion.NewLedger[int](diffusion.PullRules{Window: 200 * time.Millisecond, Delay: -1, Ban: time.Second})
	if _, ok := l.AskOffer(1, ms(0)); ok {
		t.Fatal("asked for an item nobody announced")
	}
	l.Offer(1, "silent")
	l.Offer(1, "honest")
	l.Offer(1, "honest")
	if got := l.Offers(1); got != 2 {
		t.Fatalf("offers %d, want 2 (one per announcer)", got)
	}
	if _, asked := l.Asked(1); asked {
		t.Fatal("an offer made a request")
	}
	// "silent" left another item's request unanswered: banned.
	l.Announced(2, "silent", ms(0))
	l.Due(ms(250))
	p, ok := l.AskOffer(1, ms(260))
	if !ok || p != "honest" {
		t.Fatalf("AskOffer = %q, %v; want honest (silent is banned)", p, ok)
	}
	if _, ok := l.AskOffer(1, ms(270)); ok {
		t.Error("asked twice while a request is outstanding")
	}
	if due := l.Due(ms(260 + 199)); len(due) != 0 {
		t.Errorf("the request lapsed before its window: %v", due)
	}
	l.Offer(3, "a")
	l.Arrived(3)
	if _, ok := l.AskOffer(3, ms(300)); ok {
		t.Error("asked for an arrived item")
	}
}
