// Package assertions turns what the suite read from a devnet into verdicts:
// pure functions over typed inputs, with no I/O, no godog and no *testing.T,
// so every rule is table-tested on its own.
//
// The input is a [Network]: per node, the per-slot values of the metrics
// contract's series (package metrics names them; [Series] mirrors the names
// used here, with the distinguishing label in braces). Extraction functions
// ([WarmSlots], [Completion], [Copies], [InstallDelay]) turn it into
// [Sample] lists and fail closed: zero nodes, zero slots or a missing series
// is an error naming the node, the series and the slot. Verdict functions
// ([AllAtMost], [QuantileAtMost], [ShareAtLeast], [SpeedupAtLeast],
// [PTCTimely]) compare samples with a budget and return a [Verdict] carrying
// the measured value, the budget, pass/fail and the worst offenders sorted
// worst first.
//
// Sources: a Network holds one source's readings (its Origin): the
// metrics contract, or the standard API (package metrics'
// StandardReadings says what that source reads for each series). The
// extraction functions are the same for both; a missing standard-API
// reading is named by what that source reads and by the node's client, a
// slot the source could not watch whole is a gap ([GapNote]), and a copies
// check counts what the source can ([CopiesFor], [Check.On]).
// [SourcesAgree] holds the two sources of one node to each other.
//
// Quantiles: every quantile in this package is the nearest-rank quantile of
// the pooled samples (one sample per node and warm slot): the value at rank
// ceil(q·n) of the n samples sorted ascending (rank 1 for q = 0). It is
// always a value some node actually measured, so a failing median can name
// the node that holds it. See [Quantile].
//
// Warm slots follow the published 500-node study: every slot in which a
// builder revealed a payload, except the first (cold connections, empty
// caches).
package assertions
