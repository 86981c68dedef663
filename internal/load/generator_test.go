package load_test

import (
	"context"
	"errors"
	"math"
	"math/big"
	"strings"
	"sync"
	"testing"

	gosnappy "github.com/golang/snappy"

	"github.com/ethereum/go-ethereum/core/types"

	"github.com/segdiff/segdiff/internal/load"
)

// TestFillsBlocksToTarget is the acceptance figure on the simulated
// backend: every block is within ±5 % of the 1 MiB target raw size and its
// transaction list compresses ≈1.40:1 with snappy.
func TestFillsBlocksToTarget(t *testing.T) {
	ctx := context.Background()
	b := newSim(t, false)
	g := newLoad(t, b, nil)
	if g.Fork() != load.ForkOsaka {
		t.Errorf("detected fork %s on the simulated (Osaka) chain, want osaka", g.Fork())
	}
	reports := steps(t, ctx, g, b, 6)
	if len(reports) != 6 {
		t.Fatalf("%d block reports, want 6", len(reports))
	}
	for _, r := range reports {
		t.Logf("block %d: sent %d txs %d B, included %d txs %d B, payload %d B raw, %d B snappy (%.3f:1), fill %.3f",
			r.Number, r.SentTxs, r.SentBytes, r.IncludedTxs, r.IncludedBytes, r.Payload.Raw, r.Payload.Compressed, r.Payload.Ratio(), r.Fill())
		if math.Abs(r.Fill()-1) > 0.05 {
			t.Errorf("block %d: payload %d B, %.1f %% of the %d B target; want within ±5 %%", r.Number, r.Payload.Raw, 100*r.Fill(), r.Target)
		}
		if math.Abs(r.Payload.Ratio()-1.40) > 0.03*1.40 {
			t.Errorf("block %d: snappy ratio %.3f, want 1.40 ± 3 %%", r.Number, r.Payload.Ratio())
		}
		if r.IncludedTxs != r.SentTxs || len(r.Errors) != 0 || r.Failed+r.Lost+r.Retries != 0 {
			t.Errorf("block %d: sent %d included %d, errors %v, failed %d lost %d retries %d; want all included, no errors",
				r.Number, r.SentTxs, r.IncludedTxs, r.Errors, r.Failed, r.Lost, r.Retries)
		}
	}
}

// TestCalldataCompressesLikeTheStudy measures the calldata of one block's
// transactions alone with both snappy encoders.
func TestCalldataCompressesLikeTheStudy(t *testing.T) {
	ctx := context.Background()
	b := newSim(t, false)
	g := newLoad(t, b, nil)
	steps(t, ctx, g, b, 1)
	block, err := b.Client().BlockByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var data []byte
	for _, tx := range block.Transactions() {
		data = append(data, tx.Data()...)
	}
	ratio := float64(len(data)) / float64(len(gosnappy.Encode(nil, data)))
	if math.Abs(ratio-1.40) > 0.02*1.40 {
		t.Errorf("calldata %d B compresses %.3f:1, want 1.40 ± 2 %%", len(data), ratio)
	}
	t.Logf("calldata of block %d: %d B in %d txs, %.3f:1 (golang/snappy)", block.NumberU64(), len(data), len(block.Transactions()), ratio)
}

// TestNoncesAcrossRestart: a second generator on the same accounts, started
// while the first one's transactions are still pending, continues from the
// pending nonces without a single nonce error.
func TestNoncesAcrossRestart(t *testing.T) {
	ctx := context.Background()
	accts := accounts(t)
	b := newSim(t, false)
	first := newLoad(t, b, nil)
	steps(t, ctx, first, b, 2)
	// Sent, not yet included: the restart must see these nonces as used.
	if _, err := first.Step(ctx); err != nil {
		t.Fatal(err)
	}
	// The simulated pool takes sent transactions in asynchronously: the
	// restart reads pending nonces from the pool, so the first generator's
	// sends must be in it (a real restart takes seconds; on a loaded CI
	// machine the second generator started before the pool had the last two
	// and reused their nonces).
	waitInPool(t, ctx, first, b)
	second := newLoad(t, b, nil, load.WithSeed(12))
	reports := steps(t, ctx, second, b, 3)
	for _, r := range reports {
		if len(r.Errors) != 0 || r.Lost != 0 {
			t.Errorf("block %d after restart: errors %v, lost %d; want none", r.Number, r.Errors, r.Lost)
		}
		if math.Abs(r.Fill()-1) > 0.05 {
			t.Errorf("block %d after restart: fill %.3f, want 1 ± 0.05", r.Number, r.Fill())
		}
	}
	// Every account's pending nonce equals its included nonce: nothing stuck
	// (the last Step's sends reach the pool first, as in steps).
	waitInPool(t, ctx, second, b)
	b.Commit()
	for _, a := range accts {
		pending, err := b.Client().PendingNonceAt(ctx, a.Address)
		if err != nil {
			t.Fatal(err)
		}
		included, err := b.Client().NonceAt(ctx, a.Address, nil)
		if err != nil {
			t.Fatal(err)
		}
		if pending != included {
			t.Errorf("account %d: pending nonce %d, included %d", a.Index, pending, included)
		}
	}
}

// TestRetriesRejectedTransactions: rejections of every retryable class are
// counted and retried (a gas rejection re-detects the fork first); the block
// still fills and nothing is lost.
func TestRetriesRejectedTransactions(t *testing.T) {
	ctx := context.Background()
	b := newSim(t, false)
	faulty := &faultyClient{Client: b.Client(), errs: []error{
		errors.New("replacement transaction underpriced"),
		errors.New("txpool is full"),
		errors.New("nonce too high"),
		errors.New("Post \"http://el-1:8545\": dial tcp: connection refused"),
		errors.New("nonce too low"),
		errors.New("intrinsic gas too low: have 21000, want 1200000"),
	}}
	g := newLoad(t, b, faulty)
	reports := steps(t, ctx, g, b, 2)
	first := reports[0]
	want := map[load.ErrorClass]int{load.ClassUnderpriced: 1, load.ClassPoolFull: 1, load.ClassNonceGap: 1, load.ClassTransport: 1, load.ClassNonceLow: 1,
		load.ClassGas: 1}
	for class, n := range want {
		if first.Errors[class] != n {
			t.Errorf("errors[%s] = %d, want %d (all: %v)", class, first.Errors[class], n, first.Errors)
		}
	}
	if first.Retries != 6 || first.Failed != 0 || first.Lost != 0 {
		t.Errorf("retries %d failed %d lost %d, want 6, 0, 0", first.Retries, first.Failed, first.Lost)
	}
	for _, r := range reports {
		if r.IncludedTxs != r.SentTxs || math.Abs(r.Fill()-1) > 0.05 {
			t.Errorf("block %d: sent %d included %d fill %.3f", r.Number, r.SentTxs, r.IncludedTxs, r.Fill())
		}
	}
}

// TestGivesUpAndCounts: an account whose sends keep failing is counted as
// failed and skipped; the others fill the block.
func TestGivesUpAndCounts(t *testing.T) {
	ctx := context.Background()
	b := newSim(t, false)
	faulty := &faultyClient{Client: b.Client(), errs: []error{
		errors.New("txpool is full"), errors.New("txpool is full"), errors.New("txpool is full"),
	}}
	g := newLoad(t, b, faulty, load.WithMaxAttempts(3))
	reports := steps(t, ctx, g, b, 1)
	r := reports[0]
	if r.Failed != 1 || r.Errors[load.ClassPoolFull] != 3 || r.Retries != 2 {
		t.Errorf("failed %d, pool_full %d, retries %d; want 1, 3, 2", r.Failed, r.Errors[load.ClassPoolFull], r.Retries)
	}
	if math.Abs(r.Fill()-1) > 0.05 {
		t.Errorf("fill %.3f, want 1 ± 0.05", r.Fill())
	}
}

// TestFatalErrorStops: an error no retry can fix fails the step, naming the
// account and endpoint.
func TestFatalErrorStops(t *testing.T) {
	ctx := context.Background()
	b := newSim(t, false)
	faulty := &faultyClient{Client: b.Client(), errs: []error{errors.New("insufficient funds for gas * price + value")}}
	g := newLoad(t, b, faulty)
	_, err := g.Step(ctx)
	if err == nil || !strings.Contains(err.Error(), "insufficient funds") || !strings.Contains(err.Error(), "via sim") ||
		!strings.Contains(err.Error(), "account 14") {
		t.Fatalf("Step error = %v, want the insufficient-funds answer naming account 14 and the endpoint", err)
	}
}

// TestSpreadsOverEndpoints: accounts are bound to endpoints round-robin.
func TestSpreadsOverEndpoints(t *testing.T) {
	ctx := context.Background()
	accts := accounts(t)
	b := newSim(t, false)
	e1 := &faultyClient{Client: b.Client()}
	e2 := &faultyClient{Client: b.Client()}
	g, err := load.New(ctx, fastParams(load.WithEndpoint("a", e1), load.WithEndpoint("b", e2), load.WithAccounts(accts))...)
	if err != nil {
		t.Fatal(err)
	}
	steps(t, ctx, g, b, 2)
	if e1.sends == 0 || e2.sends == 0 || e1.sends+e2.sends < 16 {
		t.Errorf("sends a=%d b=%d, want both used", e1.sends, e2.sends)
	}
}

func TestRunStopsAfterBlocks(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := newSim(t, false)
	var got []load.BlockReport
	g := newLoad(t, b, nil, load.WithBlocks(2), load.WithReport(func(r load.BlockReport) { got = append(got, r) }))
	if err := runSealing(t, ctx, g, b); err != nil {
		t.Fatal(err)
	}
	if len(got) < 2 {
		t.Fatalf("%d reports, want 2", len(got))
	}
}

func TestNewRejectsImpossibleTargets(t *testing.T) {
	ctx := context.Background()
	accts := accounts(t)
	b := newSim(t, false)
	tests := []struct {
		name   string
		params []load.Parameter
		want   string
	}{
		{"no endpoint", []load.Parameter{load.WithAccounts(accts)}, "no endpoint"},
		{"no accounts", []load.Parameter{load.WithEndpoint("sim", b.Client())}, "no accounts"},
		{"payload too large", []load.Parameter{load.WithEndpoint("sim", b.Client()), load.WithAccounts(accts), load.WithPayloadBytes(9 << 20)}, "payload bytes"},
		{"tx above the cap", []load.Parameter{load.WithEndpoint("sim", b.Client()), load.WithAccounts(accts), load.WithTxDataBytes(2 << 20)}, "per-transaction cap"},
		{"above the gas limit", []load.Parameter{load.WithEndpoint("sim", b.Client()), load.WithAccounts(accts), load.WithPayloadBytes(8 << 20)}, "block gas limit"},
		{"unknown fork", []load.Parameter{load.WithEndpoint("sim", b.Client()), load.WithAccounts(accts), load.WithFork("cancun")}, "unknown fork"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load.New(ctx, fastParams(tt.params...)...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// flakyHeads fails HeaderByNumber with a transport error a number of times.
type flakyHeads struct {
	load.Client
	mu    sync.Mutex
	fails int
}

func (f *flakyHeads) HeaderByNumber(ctx context.Context, n *big.Int) (*types.Header, error) {
	f.mu.Lock()
	fail := f.fails > 0 && n == nil
	if fail {
		f.fails--
	}
	f.mu.Unlock()
	if fail {
		return nil, errors.New("Post \"http://el-1:8545\": dial tcp: connection refused")
	}
	return f.Client.HeaderByNumber(ctx, n)
}

// TestRunSurvivesTransportErrors: an EL that stops answering for a while
// does not end Run.
func TestRunSurvivesTransportErrors(t *testing.T) {
	ctx := context.Background()
	b := newSim(t, false)
	flaky := &flakyHeads{Client: b.Client()}
	g := newLoad(t, b, flaky, load.WithBlocks(2))
	flaky.mu.Lock()
	flaky.fails = 5
	flaky.mu.Unlock()
	if err := runSealing(t, ctx, g, b); err != nil {
		t.Fatalf("Run: %v", err)
	}
}
