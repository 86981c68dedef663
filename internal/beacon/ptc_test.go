package beacon_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/attestantio/go-eth2-client/spec/gloas"

	"github.com/segdiff/segdiff/internal/beacon"
	"github.com/segdiff/segdiff/internal/beacon/beacontest"
	"github.com/segdiff/segdiff/internal/chainview"
)

func newClient(t *testing.T, chain *beacontest.Chain) *beacon.Client {
	t.Helper()
	srv := beacontest.NewServer(t, chain)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	c, err := beacon.New(ctx, beacon.WithAddress(srv.URL), beacon.WithTimeout(5*time.Second))
	if err != nil {
		t.Fatalf("beacon.New: %v", err)
	}
	return c
}

func TestReadPTC(t *testing.T) {
	const n = 40 // the slot whose payload is voted on
	rootN := beacontest.Root(n)
	att := beacontest.Attestation
	pos := beacontest.Positions
	tests := []struct {
		name        string
		ptcSize     string // spec PTC_SIZE; "" = not exposed
		blockAtN    bool
		next        []*gloas.PayloadAttestation // nil with noNext = no block at n+1
		noNext      bool
		wantPresent int
		wantSize    int
		wantTimely  bool
		wantErr     error
	}{
		{name: "all present", ptcSize: "512", blockAtN: true,
			next:        []*gloas.PayloadAttestation{att(n, rootN, true, 512, pos(512)...)},
			wantPresent: 512, wantSize: 512, wantTimely: true},
		{name: "exactly half is below threshold", ptcSize: "512", blockAtN: true,
			next:        []*gloas.PayloadAttestation{att(n, rootN, true, 512, pos(256)...)},
			wantPresent: 256, wantSize: 512, wantTimely: false},
		{name: "one over half is timely", ptcSize: "512", blockAtN: true,
			next:        []*gloas.PayloadAttestation{att(n, rootN, true, 512, pos(257)...)},
			wantPresent: 257, wantSize: 512, wantTimely: true},
		{name: "duplicate positions across aggregates count once", ptcSize: "512", blockAtN: true,
			next: []*gloas.PayloadAttestation{
				att(n, rootN, true, 512, pos(200)...),
				att(n, rootN, true, 512, append(pos(200), 200, 201, 202)...),
			},
			wantPresent: 203, wantSize: 512},
		{name: "absent votes do not count", ptcSize: "512", blockAtN: true,
			next: []*gloas.PayloadAttestation{
				att(n, rootN, true, 512, pos(100)...),
				att(n, rootN, false, 512, pos(512)...),
			},
			wantPresent: 100, wantSize: 512},
		{name: "all absent is zero votes, not missing", ptcSize: "512", blockAtN: true,
			next:        []*gloas.PayloadAttestation{att(n, rootN, false, 512, pos(512)...)},
			wantPresent: 0, wantSize: 512},
		{name: "wrong slot and wrong root aggregates ignored", ptcSize: "512", blockAtN: true,
			next: []*gloas.PayloadAttestation{
				att(n-1, rootN, true, 512, pos(512)...),
				att(n, beacontest.Root(n-1), true, 512, pos(512)...),
				att(n, rootN, true, 512, 5, 6, 7),
			},
			wantPresent: 3, wantSize: 512},
		{name: "only wrong slot aggregates", ptcSize: "512", blockAtN: true,
			next:    []*gloas.PayloadAttestation{att(n-1, rootN, true, 512, pos(512)...)},
			wantErr: chainview.ErrNoVotes},
		{name: "block without payload attestations", ptcSize: "512", blockAtN: true,
			next: nil, wantErr: chainview.ErrNoVotes},
		{name: "no block at n+1", ptcSize: "512", blockAtN: true, noNext: true, wantErr: chainview.ErrNoVotes},
		{name: "empty slot n", ptcSize: "512", blockAtN: false,
			next:    []*gloas.PayloadAttestation{att(n, rootN, true, 512, pos(512)...)},
			wantErr: chainview.ErrNoVotes},
		{name: "minimal preset size from spec", ptcSize: "16", blockAtN: true,
			next:        []*gloas.PayloadAttestation{att(n, rootN, true, 16, pos(9)...)},
			wantPresent: 9, wantSize: 16, wantTimely: true},
		{name: "size from bitvector when spec lacks PTC_SIZE", ptcSize: "", blockAtN: true,
			next:        []*gloas.PayloadAttestation{att(n, rootN, true, 16, pos(8)...)},
			wantPresent: 8, wantSize: 16, wantTimely: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chain := beacontest.NewChain(time.Unix(1_700_000_000, 0))
			if tt.ptcSize == "" {
				delete(chain.Spec, "PTC_SIZE")
			} else {
				chain.Spec["PTC_SIZE"] = tt.ptcSize
			}
			chain.Put(beacontest.Block(n-1, beacontest.Root(n-2)), beacontest.Root(n-1))
			parent := beacontest.Root(n - 1)
			if tt.blockAtN {
				chain.Put(beacontest.Block(n, parent), rootN)
				parent = rootN
			}
			if !tt.noNext {
				chain.Put(beacontest.Block(n+1, parent, tt.next...), beacontest.Root(n+1))
			}
			got, err := newClient(t, chain).PTC(context.Background(), n)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("PTC(%d) error = %v, want %v", n, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("PTC(%d): %v", n, err)
			}
			if got.Slot != n || got.PayloadPresent != tt.wantPresent || got.Size != tt.wantSize || got.Timely() != tt.wantTimely {
				t.Errorf("PTC(%d) = %+v (timely %v), want present %d size %d timely %v",
					n, got, got.Timely(), tt.wantPresent, tt.wantSize, tt.wantTimely)
			}
			if got.Source == "" {
				t.Errorf("PTC(%d).Source is empty", n)
			}
		})
	}
}

func TestCountPTCMismatchedWidths(t *testing.T) {
	root := beacontest.Root(3)
	block := beacontest.Block(4, root,
		beacontest.Attestation(3, root, true, 512, 1),
		beacontest.Attestation(3, root, true, 16, 1),
	)
	if _, err := beacon.CountPTC(block, 3, root, 0); err == nil {
		t.Fatal("CountPTC accepted aggregates of 512 and 16 bits")
	}
}

func TestCountPTCWidthMustMatchSpec(t *testing.T) {
	root := beacontest.Root(3)
	for _, tt := range []struct{ bits, size int }{{512, 16}, {16, 512}} {
		block := beacontest.Block(4, root, beacontest.Attestation(3, root, true, tt.bits, 1))
		if _, err := beacon.CountPTC(block, 3, root, tt.size); err == nil {
			t.Errorf("CountPTC accepted %d bits with PTC_SIZE %d", tt.bits, tt.size)
		}
	}
}
