package metrics

import (
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// ReceiveBlockSeries is Prysm's summary of the time its ReceiveBlock takes
// per block (state transition and fork-choice insertion, the wait for data
// availability excluded), in milliseconds. Every block a node installs goes
// through it, the node's own proposal included, so the standard source reads
// a node's block-install time from it (sum and count at slot boundaries)
// where the client exports it: the block_gossip event, the other reading, is
// not emitted for a node's own block.
const ReceiveBlockSeries = "chain_service_processing_milliseconds"

// receiveBlockFamily reads ReceiveBlockSeries, which must be a summary (or
// untyped with _sum and _count, as a summary without quantiles may be
// scraped).
func (b *builder) receiveBlockFamily(mf *dto.MetricFamily) {
	if mf.GetType() != dto.MetricType_SUMMARY {
		b.fail(ReceiveBlockSeries, ErrWrongType, "declared %s, want summary", strings.ToLower(mf.GetType().String()))
		return
	}
	for _, m := range mf.GetMetric() {
		s := m.GetSummary()
		b.receiveBlock(s.GetSampleSum(), float64(s.GetSampleCount()), true, true)
	}
}

// receiveBlock adds a ReceiveBlockSeries sum and/or count.
func (b *builder) receiveBlock(sum, count float64, hasSum, hasCount bool) {
	if hasCount {
		n, ok := b.count(ReceiveBlockSeries+"_count", count)
		if !ok {
			return
		}
		b.snap.ReceiveBlocks += n
	}
	if hasSum {
		b.snap.ReceiveBlockMillis += sum
	}
	b.snap.HasReceiveBlock = true
}
