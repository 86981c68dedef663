// Package chainview holds what the suite reads of a devnet's beacon chain,
// as plain values: the slot clock (Timing), the payload-timeliness
// committee's votes on a payload (PTCVotes) and an epoch's health
// (EpochHealth). The beacon API reader (package beacon) produces them and
// the devnet interface (package devnet) hands them on, so neither imports
// the other.
package chainview

import (
	"errors"
	"time"
)

// Timing is the devnet's slot clock.
type Timing struct {
	Genesis      time.Time     `json:"genesis"`
	SlotDuration time.Duration `json:"slot_duration"`
	// PayloadDueBPS is the payload deadline in basis points of the slot
	// (PAYLOAD_DUE_BPS; 5000 in the consensus specs since July 2026).
	PayloadDueBPS uint64 `json:"payload_due_bps"`
}

// SlotStart returns the wall-clock (or virtual-clock) start of slot.
func (t Timing) SlotStart(slot uint64) time.Time {
	return t.Genesis.Add(time.Duration(slot) * t.SlotDuration)
}

// PayloadDeadline returns when the payload of slot is due for the PTC vote.
func (t Timing) PayloadDeadline(slot uint64) time.Time {
	return t.SlotStart(slot).Add(t.SlotDuration * time.Duration(t.PayloadDueBPS) / 10000)
}

// PTCVotes is the payload-timeliness committee's verdict on one slot's payload.
type PTCVotes struct {
	Slot uint64 `json:"slot"`
	// Size is the committee size (PTC_SIZE: 512 on mainnet presets).
	Size int `json:"size"`
	// PayloadPresent counts committee positions that voted payload_present
	// as the Gloas fork choice counts them: a member's vote sets every
	// position it holds (the committee is drawn by balance with
	// replacement, so on a network of fewer than PTC_SIZE validators per
	// slot each member holds several).
	PayloadPresent int `json:"payload_present"`
	// Voters is the number of distinct members whose payload_present vote
	// counted, Members the distinct validators in the committee (0 where
	// the source does not say).
	Voters  int `json:"voters,omitempty"`
	Members int `json:"members,omitempty"`
	// Source says where the count came from ("embedded", "chain:<block root>").
	Source string `json:"source"`
}

// Timely reports whether the payload counts as timely: more than half of the
// committee voted payload_present.
func (v PTCVotes) Timely() bool { return v.PayloadPresent > v.Size/2 }

// ErrNoVotes is returned by a devnet's PTC when no payload attestation for
// the slot was found (no block at slot+1, or it carries none).
var ErrNoVotes = errors.New("no payload attestations for slot")

// EpochHealth is what a beacon node's standard API says about one epoch of
// the chain: finality, attestation participation and, per slot, the block,
// its builder bid and the PTC's verdict on the bid's payload. The glamsterdam
// health checks (package assertions) judge it epoch by epoch.
type EpochHealth struct {
	Epoch uint64 `json:"epoch"`
	// FinalizedEpoch is the finalized checkpoint's epoch in the state at
	// the epoch's last slot.
	FinalizedEpoch uint64 `json:"finalized_epoch"`
	// Validators counts the validators the epoch's attestation rewards
	// cover (the active, eligible ones); CorrectTarget those whose target
	// component is not negative, i.e. whose attestation was included with
	// the correct target (a missed or wrong target is penalised; in an
	// inactivity leak a correct one earns 0).
	Validators    int          `json:"validators"`
	CorrectTarget int          `json:"correct_target"`
	Slots         []SlotHealth `json:"slots"`
}

// SlotHealth is one slot of an EpochHealth.
type SlotHealth struct {
	Slot uint64 `json:"slot"`
	// Block is true when the slot has a canonical block.
	Block bool `json:"block"`
	// ExternalBuilder is true when the block's execution-payload bid is not
	// self-built (builder_index != BUILDER_INDEX_SELF_BUILD).
	ExternalBuilder bool   `json:"external_builder"`
	BuilderIndex    uint64 `json:"builder_index"`
	// PTC holds the payload-timeliness committee's votes on the block's
	// payload, carried by the block of the next slot; VotesFound is false
	// when that block has none for this block (or does not exist), so the
	// payload was never judged on chain.
	PTC        PTCVotes `json:"ptc"`
	VotesFound bool     `json:"votes_found"`
}

// PayloadPresent reports whether the PTC judged the bid's payload revealed
// and present: votes found and more than half of the committee voted
// payload_present.
func (s SlotHealth) PayloadPresent() bool { return s.Block && s.VotesFound && s.PTC.Timely() }
