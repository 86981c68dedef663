package load

import (
	"context"
	"fmt"
	"strings"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core"
	"github.com/ethereum/go-ethereum/params"
)

// Fork names the execution-layer pricing rules the load follows. Only the
// rules a data-only transaction meets differ between them:
//
//   - prague: EIP-7623 calldata floor: gas ≥ 21000 + 10 × (zero bytes + 4 ×
//     non-zero bytes), next to the EIP-2028 standard 4/16 per byte.
//   - osaka: prague's pricing plus the EIP-7825 per-transaction gas cap 2^24.
//   - amsterdam: EIP-7976 floor 16 gas per token with every byte 4 tokens
//     (64 gas per calldata byte, zero or not), EIP-2780's decomposed base cost
//     replacing 21000, and under EIP-8037 the intrinsic and floor gas must
//     still fit 2^24. (EIP-7981 prices access lists; the load sends none.)
//
// The gas itself is computed by go-ethereum v1.17.10's core.IntrinsicGas and
// core.FloorDataGas for the fork's params.Rules, so it is the execution
// client's own arithmetic, not a constant of this package.
type Fork string

// Forks the load knows, oldest first.
const (
	ForkPrague    Fork = "prague"
	ForkOsaka     Fork = "osaka"
	ForkAmsterdam Fork = "amsterdam"
	// ForkAuto asks the EL: see DetectFork.
	ForkAuto Fork = "auto"
)

// Forks lists the concrete forks, oldest first.
var Forks = []Fork{ForkPrague, ForkOsaka, ForkAmsterdam}

// ParseFork reads a fork name (case-insensitive); "auto" is accepted.
func ParseFork(s string) (Fork, error) {
	f := Fork(strings.ToLower(strings.TrimSpace(s)))
	switch f {
	case ForkPrague, ForkOsaka, ForkAmsterdam, ForkAuto:
		return f, nil
	}
	return "", fmt.Errorf("unknown fork %q (want auto, prague, osaka or amsterdam)", s)
}

func (f Fork) rules() params.Rules {
	r := params.Rules{IsHomestead: true, IsEIP150: true, IsEIP155: true, IsEIP158: true, IsByzantium: true,
		IsConstantinople: true, IsPetersburg: true, IsIstanbul: true, IsBerlin: true, IsEIP2929: true,
		IsLondon: true, IsMerge: true, IsShanghai: true, IsCancun: true, IsPrague: true}
	switch f {
	case ForkAmsterdam:
		r.IsOsaka, r.IsAmsterdam = true, true
	case ForkOsaka:
		r.IsOsaka = true
	}
	return r
}

// Gas returns the gas limit a zero-value transaction from → to carrying data
// needs under f: the larger of the intrinsic gas and the calldata floor (a
// transfer to an account without code executes nothing).
func (f Fork) Gas(from, to common.Address, data []byte) (uint64, error) {
	rules := f.rules()
	intrinsic, err := core.IntrinsicGas(data, nil, nil, from, &to, nil, rules)
	if err != nil {
		return 0, fmt.Errorf("intrinsic gas under %s: %w", f, err)
	}
	if !rules.IsPrague {
		return intrinsic, nil
	}
	floor, err := core.FloorDataGas(rules, from, &to, nil, data, nil)
	if err != nil {
		return 0, fmt.Errorf("floor data gas under %s: %w", f, err)
	}
	return max(intrinsic, floor), nil
}

// TxGasCap is the most gas one of the load's transactions may need under f:
// 2^24 from Osaka on (EIP-7825; under Amsterdam EIP-8037 bounds the
// intrinsic and floor gas by the same 2^24), none before.
func (f Fork) TxGasCap() uint64 {
	if f.rules().IsOsaka {
		return params.MaxTxGas
	}
	return 0
}

// estimator is the part of a client fork detection needs.
type estimator interface {
	EstimateGas(ctx context.Context, msg ethereum.CallMsg) (uint64, error)
}

// estimateSlack is the relative error an EL's gas estimate may have above
// the exact figure: geth's estimator stops its binary search once within
// 1.5 % (internal/ethapi, estimateGasErrorRatio). The forks' prices for the
// probe differ by about 2x, so the slack cannot confuse them.
const estimateSlack = 0.02

// DetectFork asks c to estimate a data-only probe transaction from → from
// and returns the newest fork whose Gas the estimate matches (equal, or up
// to estimateSlack above). Prague and
// Osaka price calldata alike; a match of both is reported as Osaka, whose
// per-transaction cap is the stricter and holds on Prague too. An estimate no
// fork explains is an error naming every candidate, so a devnet whose rules
// this package does not know is not loaded with wrong gas.
func DetectFork(ctx context.Context, c estimator, from common.Address, probe []byte) (Fork, error) {
	got, err := c.EstimateGas(ctx, ethereum.CallMsg{From: from, To: &from, Data: probe})
	if err != nil {
		return "", fmt.Errorf("detect fork: estimate probe gas: %w", err)
	}
	var tried []string
	for i := len(Forks) - 1; i >= 0; i-- {
		want, err := Forks[i].Gas(from, from, probe)
		if err != nil {
			return "", fmt.Errorf("detect fork: %w", err)
		}
		if got >= want && float64(got-want) <= estimateSlack*float64(want) {
			return Forks[i], nil
		}
		tried = append(tried, fmt.Sprintf("%s %d", Forks[i], want))
	}
	return "", fmt.Errorf("detect fork: the EL estimates %d gas for a %d-byte probe, which matches no known pricing (%s); set the fork explicitly",
		got, len(probe), strings.Join(tried, ", "))
}
