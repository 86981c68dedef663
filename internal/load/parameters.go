package load

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// Client is the part of an execution client's JSON-RPC the load uses;
// *ethclient.Client and go-ethereum's simulated backend client satisfy it.
// Implementations must be safe for concurrent use.
type Client interface {
	ChainID(ctx context.Context) (*big.Int, error)
	HeaderByNumber(ctx context.Context, number *big.Int) (*types.Header, error)
	BlockByNumber(ctx context.Context, number *big.Int) (*types.Block, error)
	PendingNonceAt(ctx context.Context, account common.Address) (uint64, error)
	NonceAt(ctx context.Context, account common.Address, blockNumber *big.Int) (uint64, error)
	SendTransaction(ctx context.Context, tx *types.Transaction) error
	EstimateGas(ctx context.Context, msg ethereum.CallMsg) (uint64, error)
}

// Endpoint is one EL the load sends through.
type Endpoint struct {
	// Name labels the endpoint in messages (its URL, or a service name).
	Name   string
	Client Client
}

// Defaults of the parameters.
const (
	// DefaultPayloadBytes is the target raw payload size: 1 MiB, the
	// design's payload (≈746 KB after snappy).
	DefaultPayloadBytes = 1 << 20
	// DefaultTxDataBytes is the calldata per transaction: 124 KiB keeps the
	// whole transaction under the 128 KiB that geth's (and reth's) pool
	// accepts, and its gas far under the 2^24 cap of every fork.
	DefaultTxDataBytes = 124 << 10
	// MaxPayloadBytes bounds the target: EIP-7934 (Osaka) limits an RLP
	// block to 10 MiB minus a 2 MiB margin for the beacon block.
	MaxPayloadBytes = 8 << 20
	// MinTxDataBytes is the smallest calldata the load sends; a smaller
	// remainder of a block's target is left unfilled.
	MinTxDataBytes = 1 << 10
)

const (
	// maxPendingPerAccount is geth's AccountSlots: more executable
	// transactions per account than this may be evicted under pressure.
	maxPendingPerAccount = 16
	// staleAfterBlocks is how many blocks an account's oldest pending
	// transaction may wait before the load re-reads the account's pending
	// nonce from the EL and counts transactions the pool no longer has as
	// lost.
	staleAfterBlocks = 4
)

// DefaultTip is the priority fee per gas, 1 gwei.
var DefaultTip = big.NewInt(1_000_000_000)

// Parameter configures New.
type Parameter interface{ apply(*parameters) }

type parameterFunc func(*parameters)

func (f parameterFunc) apply(p *parameters) { f(p) }

type parameters struct {
	endpoints    []Endpoint
	accounts     []Account
	payloadBytes int
	txDataBytes  int
	fork         Fork
	tip          *big.Int
	poll         time.Duration
	backoff      time.Duration
	maxBackoff   time.Duration
	attempts     int
	seed         uint64
	blocks       int
	genesis      time.Time
	slot         time.Duration
	report       func(BlockReport)
	log          io.Writer
}

// WithEndpoint adds an EL to send through (at least one is required). The
// first one added is also the one blocks are read from. Accounts are bound
// to endpoints round-robin.
func WithEndpoint(name string, c Client) Parameter {
	return parameterFunc(func(p *parameters) { p.endpoints = append(p.endpoints, Endpoint{Name: name, Client: c}) })
}

// WithAccounts sets the signing accounts (required; see DeriveAccounts).
func WithAccounts(accounts []Account) Parameter {
	return parameterFunc(func(p *parameters) { p.accounts = accounts })
}

// WithPayloadBytes is the target raw (SSZ) payload size per block. Default
// DefaultPayloadBytes; at most MaxPayloadBytes.
func WithPayloadBytes(n int) Parameter {
	return parameterFunc(func(p *parameters) { p.payloadBytes = n })
}

// WithTxDataBytes is the calldata of a full transaction. Default
// DefaultTxDataBytes; at least MinTxDataBytes.
func WithTxDataBytes(n int) Parameter {
	return parameterFunc(func(p *parameters) { p.txDataBytes = n })
}

// WithFork sets the pricing rules. Default ForkAuto (DetectFork).
func WithFork(f Fork) Parameter {
	return parameterFunc(func(p *parameters) { p.fork = f })
}

// WithTip is the priority fee per gas in wei. Default DefaultTip.
func WithTip(wei *big.Int) Parameter {
	return parameterFunc(func(p *parameters) { p.tip = wei })
}

// WithPollInterval is how often Run looks for a new head. Default 500 ms.
func WithPollInterval(d time.Duration) Parameter {
	return parameterFunc(func(p *parameters) { p.poll = d })
}

// WithBackoff sets the first retry delay and its cap; the delay doubles per
// attempt. Default 250 ms and 4 s.
func WithBackoff(initial, maximum time.Duration) Parameter {
	return parameterFunc(func(p *parameters) { p.backoff, p.maxBackoff = initial, maximum })
}

// WithMaxAttempts bounds the sends of one transaction. Default 8.
func WithMaxAttempts(n int) Parameter {
	return parameterFunc(func(p *parameters) { p.attempts = n })
}

// WithSeed seeds the calldata generator. Default: the start time, so runs
// (and restarts) send different bytes.
func WithSeed(seed uint64) Parameter {
	return parameterFunc(func(p *parameters) { p.seed = seed })
}

// WithBlocks makes Run return after observing n blocks. Default 0: run
// until the context ends.
func WithBlocks(n int) Parameter {
	return parameterFunc(func(p *parameters) { p.blocks = n })
}

// WithSlots labels blocks with their beacon slot: (timestamp − genesis) /
// slot. Default none (slot reported as -1).
func WithSlots(genesis time.Time, slot time.Duration) Parameter {
	return parameterFunc(func(p *parameters) { p.genesis, p.slot = genesis, slot })
}

// WithReport receives every observed block's report, in block order, on
// Run's goroutine. Default none.
func WithReport(f func(BlockReport)) Parameter {
	return parameterFunc(func(p *parameters) { p.report = f })
}

// WithLog receives progress and retry messages. Default io.Discard.
func WithLog(w io.Writer) Parameter {
	return parameterFunc(func(p *parameters) { p.log = w })
}

func parseAndCheckParameters(params ...Parameter) (*parameters, error) {
	p := &parameters{
		payloadBytes: DefaultPayloadBytes,
		txDataBytes:  DefaultTxDataBytes,
		fork:         ForkAuto,
		tip:          DefaultTip,
		poll:         500 * time.Millisecond,
		backoff:      250 * time.Millisecond,
		maxBackoff:   4 * time.Second,
		attempts:     8,
		seed:         uint64(time.Now().UnixNano()),
		log:          io.Discard,
	}
	for _, param := range params {
		if param != nil {
			param.apply(p)
		}
	}
	switch {
	case len(p.endpoints) == 0:
		return nil, errors.New("no endpoint specified")
	case len(p.accounts) == 0:
		return nil, errors.New("no accounts specified")
	case p.payloadBytes < MinTxDataBytes || p.payloadBytes > MaxPayloadBytes:
		return nil, fmt.Errorf("payload bytes %d outside [%d, %d]", p.payloadBytes, MinTxDataBytes, MaxPayloadBytes)
	case p.txDataBytes < MinTxDataBytes:
		return nil, fmt.Errorf("transaction data bytes %d below %d", p.txDataBytes, MinTxDataBytes)
	case p.tip == nil || p.tip.Sign() < 0:
		return nil, errors.New("tip must be a non-negative amount of wei")
	case p.poll <= 0 || p.backoff <= 0 || p.maxBackoff < p.backoff:
		return nil, errors.New("poll interval and backoff must be positive, backoff cap at least the initial backoff")
	case p.attempts < 1:
		return nil, errors.New("max attempts must be at least 1")
	case p.log == nil:
		return nil, errors.New("no log writer specified")
	}
	for i, e := range p.endpoints {
		if e.Client == nil {
			return nil, fmt.Errorf("endpoint %d (%s) has no client", i, e.Name)
		}
	}
	if _, err := ParseFork(string(p.fork)); err != nil {
		return nil, err
	}
	return p, nil
}
