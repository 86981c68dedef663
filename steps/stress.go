package steps

import (
	"context"
	"errors"

	"github.com/segdiff/segdiff/assertions"
)

// Steps of stress.feature beyond the devnet selection (aStressedDevnet).

// stressDefinitions are this file's sentences.
func (s *Suite) stressDefinitions() []definition {
	const stress = "stress.feature"
	return []definition{
		{stress, "Then", `^no node completes any warm payload$`, s.noneCompletes, nil},
	}
}

// noneCompletes asserts the failure the design predicts for a network: no
// honest receiver completes any warm payload. It passes only when every one
// is stranded, and records every stranded node with its slot and the parts
// it held; any node that completed fails it, by name.
func (s *Suite) noneCompletes(ctx context.Context) error {
	st, o, err := single(ctx)
	if err != nil {
		return err
	}
	const check = "receivers that completed a warm payload"
	completed, err := assertions.Completion(o.net, o.slots)
	var stranded *assertions.MissingReadings
	if err != nil && !errors.As(err, &stranded) {
		return st.fail(check, assertions.UnitShare, assertions.OpAtMost, 0, err)
	}
	pairs := o.net.ReceivingPairs(o.slots)
	v := assertions.NoneComplete(check, completed, stranded, pairs)
	return st.record(v, budgetValue{source: "the design (segments without a code cannot survive an omitting source)"})
}
