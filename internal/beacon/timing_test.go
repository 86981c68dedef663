package beacon_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/segdiff/segdiff/internal/beacon"
	"github.com/segdiff/segdiff/internal/beacon/beacontest"
)

func TestTiming(t *testing.T) {
	genesis := time.Unix(1_750_000_000, 0)
	tests := []struct {
		name      string
		spec      map[string]string // replaces the defaults
		wantSlot  time.Duration
		wantBPS   uint64
		wantErrIs error
		wantErr   bool
	}{
		{name: "gloas config", spec: map[string]string{"SECONDS_PER_SLOT": "12", "SLOT_DURATION_MS": "12000", "PAYLOAD_DUE_BPS": "5000"},
			wantSlot: 12 * time.Second, wantBPS: 5000},
		{name: "sub-second slot duration wins", spec: map[string]string{"SECONDS_PER_SLOT": "6", "SLOT_DURATION_MS": "5500", "PAYLOAD_DUE_BPS": "7500"},
			wantSlot: 5500 * time.Millisecond, wantBPS: 7500},
		{name: "pre-gloas spec: seconds only, no bps", spec: map[string]string{"SECONDS_PER_SLOT": "6"},
			wantSlot: 6 * time.Second, wantBPS: 0},
		{name: "no slot duration", spec: map[string]string{"PAYLOAD_DUE_BPS": "5000"}, wantErrIs: beacon.ErrNoSpecValue},
		{name: "bps over 10000", spec: map[string]string{"SECONDS_PER_SLOT": "12", "PAYLOAD_DUE_BPS": "10001"}, wantErr: true},
		{name: "bps not a number", spec: map[string]string{"SECONDS_PER_SLOT": "12", "PAYLOAD_DUE_BPS": "half"}, wantErrIs: beacon.ErrNoSpecValue},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chain := beacontest.NewChain(genesis)
			chain.Spec = tt.spec
			got, err := newClient(t, chain).Timing(context.Background())
			switch {
			case tt.wantErrIs != nil:
				if !errors.Is(err, tt.wantErrIs) {
					t.Fatalf("Timing error = %v, want %v", err, tt.wantErrIs)
				}
				return
			case tt.wantErr:
				if err == nil {
					t.Fatalf("Timing = %+v, want an error", got)
				}
				return
			case err != nil:
				t.Fatalf("Timing: %v", err)
			}
			if !got.Genesis.Equal(genesis) || got.SlotDuration != tt.wantSlot || got.PayloadDueBPS != tt.wantBPS {
				t.Errorf("Timing = %+v, want genesis %v slot %v bps %d", got, genesis, tt.wantSlot, tt.wantBPS)
			}
		})
	}
}

func TestNewFailsWithoutNode(t *testing.T) {
	if _, err := beacon.New(context.Background()); err == nil {
		t.Fatal("New without address succeeded")
	}
	// A closed port: go-eth2-client reports the node inactive.
	if _, err := beacon.New(context.Background(), beacon.WithAddress("http://127.0.0.1:1"), beacon.WithTimeout(time.Second)); err == nil {
		t.Fatal("New against a closed port succeeded")
	}
}
