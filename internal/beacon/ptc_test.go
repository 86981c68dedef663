package beacon_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/attestantio/go-eth2-client/spec/gloas"
	"github.com/attestantio/go-eth2-client/spec/phase0"

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
	first := beacontest.FirstPositions
	small := beacontest.SmallPTC(512, 24)
	tests := []struct {
		name        string
		ptcSize     string                  // spec PTC_SIZE; "" = not exposed
		committee   []phase0.ValidatorIndex // the PTC of slot n; nil = IdentityPTC
		blockAtN    bool
		next        []*gloas.PayloadAttestation // nil with noNext = no block at n+1
		noNext      bool
		wantPresent int
		wantVoters  int // 0: not checked
		wantSize    int
		wantTimely  bool
		wantErr     error
		wantErrText string
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
		{name: "an aggregate of another width than the committee", ptcSize: "512", blockAtN: true,
			next:        []*gloas.PayloadAttestation{att(n, rootN, true, 16, pos(16)...)},
			wantErrText: "has 16 bits, the committee of slot 40 has 512 positions"},
		// 768 validators: 24 per slot hold the 512 positions, 21 or 22 each,
		// and an aggregate carries one bit per member (Prysm c40b59a).
		{name: "small network: every member votes, every position counts", ptcSize: "512", committee: small,
			blockAtN: true, next: []*gloas.PayloadAttestation{att(n, rootN, true, 512, first(small, 24)...)},
			wantPresent: 512, wantVoters: 24, wantSize: 512, wantTimely: true},
		{name: "small network: 12 of 24 members hold 260 positions", ptcSize: "512", committee: small,
			blockAtN: true, next: []*gloas.PayloadAttestation{att(n, rootN, true, 512, first(small, 12)...)},
			wantPresent: 8*22 + 4*21, wantVoters: 12, wantSize: 512, wantTimely: true},
		{name: "small network: 11 of 24 members hold 239 positions", ptcSize: "512", committee: small,
			blockAtN: true, next: []*gloas.PayloadAttestation{att(n, rootN, true, 512, first(small, 11)...)},
			wantPresent: 8*22 + 3*21, wantVoters: 11, wantSize: 512, wantTimely: false},
		{name: "small network: a member's bit at a later position counts all of its positions", ptcSize: "512", committee: small,
			blockAtN: true, next: []*gloas.PayloadAttestation{att(n, rootN, true, 512, 24+5)},
			wantPresent: 22, wantVoters: 1, wantSize: 512},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chain := beacontest.NewChain(time.Unix(1_700_000_000, 0))
			if tt.ptcSize == "" {
				delete(chain.Spec, "PTC_SIZE")
			} else {
				chain.Spec["PTC_SIZE"] = tt.ptcSize
			}
			if tt.committee != nil {
				chain.PTC = func(uint64) []phase0.ValidatorIndex { return tt.committee }
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
			if tt.wantErrText != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErrText) {
					t.Fatalf("PTC(%d) error = %v, want one saying %q", n, err, tt.wantErrText)
				}
				return
			}
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
			if tt.wantVoters != 0 && got.Voters != tt.wantVoters {
				t.Errorf("PTC(%d).Voters = %d, want %d", n, got.Voters, tt.wantVoters)
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
	if _, err := beacon.CountPTC(block, 3, root, beacontest.IdentityPTC(512)); err == nil {
		t.Fatal("CountPTC accepted aggregates of 512 and 16 bits")
	}
}

func TestCountPTCNeedsTheCommittee(t *testing.T) {
	root := beacontest.Root(3)
	block := beacontest.Block(4, root, beacontest.Attestation(3, root, true, 512, 1))
	if _, err := beacon.CountPTC(block, 3, root, nil); err == nil {
		t.Error("CountPTC counted without a committee")
	}
	if _, err := beacon.CountPTC(block, 3, root, beacontest.IdentityPTC(16)); err == nil {
		t.Error("CountPTC accepted 512 bits against a committee of 16")
	}
}
