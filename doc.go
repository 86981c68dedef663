// Package segdiff is the root of a Kurtosis devnet plugin and end-to-end
// test suite for segmented execution-payload diffusion (EIP-8411) on a
// glamsterdam (Gloas/ePBS) devnet.
//
// In Gloas the builder reveals the execution payload in its own gossip
// message after the block, due at PAYLOAD_DUE_BPS (half the slot), and the
// payload-timeliness committee votes on whether it arrived in time. Whole
// payloads of 1 MiB gossiped to 500 home-link nodes took a median 4.9 s and
// 4.4 copies per node in the published study (its own count: message data
// of every copy received); 32 KiB segments committed to in the bid took
// 0.73 s and 1.4 copies. The Gherkin features in features/ assert PTC timeliness
// per slot, every node's completion within 3 s of the reveal and the bytes
// each node receives, reading only the metrics contract (package metrics)
// and the beacon API, so they run unchanged against the embedded devnet
// (package internal/devnet/embedded, the default) and a Kurtosis enclave of patched clients
// (package internal/devnet/kurtosis, DEVNET=kurtosis).
//
// The suite runs under go test (TestFeatures in suite_test.go, gated by
// SEGDIFF_E2E=1; make e2e) and with the godog CLI (godog run features/).
// Reports go to reports/<run-id>/ with reports/latest pointing at the newest.
package segdiff
