package beacon_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/segdiff/segdiff/internal/beacon"
	"github.com/segdiff/segdiff/internal/beacon/beacontest"
)

func TestBidBlockHash(t *testing.T) {
	chain := beacontest.NewChain(time.Unix(1_800_000_000, 0))
	b := beacontest.Block(5, beacontest.Root(4))
	want := [32]byte{0xe1, 5}
	b.Message.Body.SignedExecutionPayloadBid.Message.BlockHash = want
	chain.Put(b, beacontest.Root(5))
	c := newClient(t, chain)
	got, err := c.BidBlockHash(context.Background(), 5)
	if err != nil || got != want {
		t.Fatalf("BidBlockHash(5) = %x, %v; want %x", got, err, want)
	}
	if _, err := c.BidBlockHash(context.Background(), 6); !errors.Is(err, beacon.ErrNoBlock) {
		t.Fatalf("BidBlockHash(6) error = %v, want ErrNoBlock", err)
	}
}
