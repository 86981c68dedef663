// Package load puts a transaction load on a devnet's execution layer so that
// every block's execution payload reaches a target size with mainnet-like
// compressibility. Without it a fresh Kurtosis devnet carries payloads of a
// few kilobytes — one segment, a few milliseconds on any link — and no
// diffusion figure measured on it means anything.
//
// A Generator sends data-only transactions (calldata from
// eip8411.MainnetLikeWords, the published study's generator: snappy ratio
// ≈1.40:1) from accounts derived from ethereum-package's mnemonic
// (accounts.go), spread over the EL JSON-RPC endpoints (each account is bound
// to one endpoint, so its nonces arrive in order). It is paced by the chain:
// after every new head it tops the not-yet-included transactions up to one
// block's worth of the target (generator.go), so payloads stay at the target
// instead of draining a growing pool. Gas is computed from the active fork's
// pricing rules (gas.go: EIP-7623 floor from Prague, the EIP-7825 per-tx cap
// from Osaka, EIP-7976 calldata and EIP-2780 base cost from Amsterdam, as
// go-ethereum v1.17.10 implements them) and, by default, the fork is
// detected by asking the EL to estimate a probe transaction. A devnet
// crosses forks while the load runs (Osaka to Amsterdam at Gloas): the EL's
// schedule (eth_config, EIP-7910) and an estimate at the next fork's time
// tell the load its next pricing, and in the last two minutes before the
// fork every transaction carries gas valid under both (schedule.go). A
// transaction the pool holds but no block includes (priced for rules that
// passed, on an EL that cannot tell its schedule, or left by an earlier
// run) is replaced at its nonce after a few blocks; payloads below half the
// target for eight blocks end the load with a StarvedError naming what it
// saw, rather than letting it run on empty. EL errors
// (underpriced, nonce gaps, full pool, …) are classified (errors.go),
// counted, and retried with backoff; a transaction given up on is counted as
// failed, never dropped silently. Nonces are read from the EL's pending
// state at start, so a restarted generator continues where the last one
// stopped.
//
// Each observed block is reported (BlockReport): what was sent for it, what
// of ours it included, and its payload's estimated SSZ size and snappy size.
package load
