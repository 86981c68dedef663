package devnet

import "context"

// Execution is implemented by devnets whose nodes run execution clients
// (the Kurtosis backend); the embedded devnet has none. The suite asserts
// through it that every EL imported the payloads the builders revealed.
type Execution interface {
	// BidBlockHash returns the execution block hash the builder's bid in
	// the beacon block of slot commits to.
	BidBlockHash(ctx context.Context, slot uint64) ([32]byte, error)
	// ELRPCURLs maps node IDs to their EL JSON-RPC URLs; nodes without an
	// EL are absent.
	ELRPCURLs(ctx context.Context) (map[string]string, error)
}
