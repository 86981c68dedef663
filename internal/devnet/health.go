package devnet

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
