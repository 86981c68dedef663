package load_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/ethclient/simulated"

	"github.com/segdiff/segdiff/internal/load"
	"github.com/segdiff/segdiff/internal/load/loadtest"
)

// These tests run a real geth (go-ethereum's simulated backend: its pool,
// miner and eth_config) across a pricing fork: the chain starts on Osaka
// and switches to Amsterdam (64 gas per calldata byte) at a set time,
// which AdjustTime crosses.

// forkingSim starts a chain that forks to Amsterdam ten minutes from now,
// served over HTTP (as an EL is: eth_config and block overrides need raw
// JSON-RPC), and returns it with its client and the fork's time.
func forkingSim(t *testing.T) (forkChain, time.Time) {
	t.Helper()
	at := time.Unix(time.Now().Add(10*time.Minute).Unix(), 0)
	b, url := loadtest.NewHTTPBackend(t, accounts(t), loadtest.AmsterdamAt(uint64(at.Unix())))
	c, err := ethclient.Dial(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return forkChain{b: b, c: c}, at
}

// schedulelessClient hides the raw JSON-RPC client, as an EL without
// eth_config would: the load cannot see the fork coming.
type schedulelessClient struct{ load.Client }

// forkChain is the simulated chain with its HTTP client; it counts the pool
// with txpool_status, as the pending block leaves out what the next block's
// rules refuse (the stuck transactions these tests are about).
type forkChain struct {
	b *simulated.Backend
	c *ethclient.Client
}

// waitInPool waits until the pool holds every transaction the load has in
// flight (the pool takes them in on its own goroutine).
func (ch forkChain) waitInPool(t *testing.T, ctx context.Context, g *load.Generator) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var status struct{ Pending, Queued hexutil.Uint }
		if err := ch.c.Client().CallContext(ctx, &status, "txpool_status"); err != nil {
			t.Fatal(err)
		}
		if int(status.Pending) >= g.InFlight() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pool holds %d pending transactions after 10 s, the load has %d in flight", status.Pending, g.InFlight())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// steps runs n rounds of Step then Commit, then a last Step, and returns
// every block report.
func (ch forkChain) steps(t *testing.T, ctx context.Context, g *load.Generator, n int) []load.BlockReport {
	t.Helper()
	var out []load.BlockReport
	for range n {
		out = append(out, stepOnce(t, ctx, g)...)
		ch.waitInPool(t, ctx, g)
		ch.b.Commit()
	}
	return append(out, stepOnce(t, ctx, g)...)
}

// emptyBlockAt includes what the pool holds, then seals an empty block at
// time at (the simulated chain moves its clock only on an empty pool); the
// next Commit seals at one second after at.
func (ch forkChain) emptyBlockAt(t *testing.T, ctx context.Context, g *load.Generator, at time.Time) {
	t.Helper()
	ch.waitInPool(t, ctx, g)
	ch.b.Commit()
	head, err := ch.c.HeaderByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.b.AdjustTime(at.Sub(time.Unix(int64(head.Time), 0))); err != nil {
		t.Fatalf("seal an empty block at %s: %v", at.UTC().Format(time.TimeOnly), err)
	}
}

// full keeps the reports of blocks the load had sent for (not the empty
// blocks the tests seal to move the clock).
func full(reports []load.BlockReport) []load.BlockReport {
	var out []load.BlockReport
	for _, r := range reports {
		if r.SentTxs > 0 || r.IncludedTxs > 0 {
			out = append(out, r)
		}
	}
	return out
}

func stepOnce(t *testing.T, ctx context.Context, g *load.Generator) []load.BlockReport {
	t.Helper()
	r, err := g.Step(ctx)
	if err != nil {
		t.Fatalf("Step: %v", err)
	}
	return r
}

func checkFilled(t *testing.T, when string, reports []load.BlockReport) {
	t.Helper()
	if len(reports) == 0 {
		t.Fatalf("%s: no block observed", when)
	}
	for _, r := range reports {
		if r.Fill() < 0.95 || r.Fill() > 1.05 {
			t.Errorf("%s: block %d (%s): fill %.3f, sent %d, included %d, replaced %d, errors %v",
				when, r.Number, r.Time.UTC().Format(time.TimeOnly), r.Fill(), r.SentTxs, r.IncludedTxs, r.Replaced, r.Errors)
		}
	}
}

// TestHoldsTargetAcrossPricingFork: the EL schedules the fork (eth_config),
// so the transactions sent in the last blocks before it carry gas for both
// rule sets, the first Amsterdam block takes them, and every block on both
// sides is at the target; none is stuck or replaced.
func TestHoldsTargetAcrossPricingFork(t *testing.T) {
	ctx := context.Background()
	ch, fork := forkingSim(t)
	var log bytes.Buffer
	g := newLoad(t, ch.b, ch.c, load.WithLog(&log))
	if g.Fork() != load.ForkOsaka {
		t.Fatalf("fork %s at start, want osaka", g.Fork())
	}
	var reports []load.BlockReport
	reports = append(reports, ch.steps(t, ctx, g, 2)[1:]...)
	// A minute before the fork (inside the load's lead), then one second
	// before it: the next block is the first under Amsterdam.
	ch.emptyBlockAt(t, ctx, g, fork.Add(-time.Minute))
	reports = append(reports, ch.steps(t, ctx, g, 2)...)
	ch.emptyBlockAt(t, ctx, g, fork.Add(-time.Second))
	reports = append(reports, stepOnce(t, ctx, g)...)
	ch.waitInPool(t, ctx, g)
	ch.b.Commit()
	crossing := stepOnce(t, ctx, g)
	reports = append(reports, crossing...)
	if got := crossing[len(crossing)-1].Time; got.Before(fork) {
		t.Fatalf("block %s is before the fork %s: the test did not cross it", got, fork)
	}
	if g.Fork() != load.ForkAmsterdam {
		t.Errorf("fork %s after the fork's block, want amsterdam; log:\n%s", g.Fork(), log.String())
	}
	reports = append(reports, ch.steps(t, ctx, g, 3)...)
	loaded := full(reports)
	checkFilled(t, "across the fork", loaded)
	for _, r := range loaded {
		if r.Replaced != 0 {
			t.Errorf("block %d: %d transactions replaced; want none stuck", r.Number, r.Replaced)
		}
	}
	if !strings.Contains(log.String(), "schedules a fork") || !strings.Contains(log.String(), "amsterdam pricing (was osaka)") {
		t.Errorf("log does not tell of the fork:\n%s", log.String())
	}
}

// crossStuck runs g until the chain is one block past the fork, with the
// transactions g sent for that block priced for Osaka alone (g cannot see
// the schedule), and checks that the block left them out.
func crossStuck(t *testing.T, ctx context.Context, g *load.Generator, ch forkChain, fork time.Time) {
	t.Helper()
	ch.steps(t, ctx, g, 2)
	ch.emptyBlockAt(t, ctx, g, fork.Add(-time.Second))
	stepOnce(t, ctx, g)
	ch.waitInPool(t, ctx, g)
	ch.b.Commit()
	block, err := ch.c.BlockByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if time.Unix(int64(block.Time()), 0).Before(fork) || len(block.Transactions()) != 0 {
		t.Fatalf("block %d at %d (fork at %d) has %d transactions; want the first Amsterdam block without the Osaka-priced ones (else this test shows nothing)",
			block.NumberU64(), block.Time(), fork.Unix(), len(block.Transactions()))
	}
}

// TestReplacesTransactionsStuckAtFork: an EL that does not report its
// schedule leaves the load's Osaka-priced transactions in the pool at the
// fork, where no Amsterdam block takes them. After staleAfterBlocks blocks
// the load re-detects the rules, replaces them at their nonces, and the
// payloads are back at the target.
func TestReplacesTransactionsStuckAtFork(t *testing.T) {
	ctx := context.Background()
	ch, fork := forkingSim(t)
	var log bytes.Buffer
	g := newLoad(t, ch.b, schedulelessClient{ch.c}, load.WithLog(&log))
	crossStuck(t, ctx, g, ch, fork)
	reports := ch.steps(t, ctx, g, 8)
	replaced := 0
	for _, r := range reports {
		replaced += r.Replaced
	}
	if replaced == 0 {
		t.Fatalf("no transaction replaced in 8 blocks after the fork; log:\n%s", log.String())
	}
	if g.Fork() != load.ForkAmsterdam {
		t.Errorf("fork %s, want amsterdam", g.Fork())
	}
	checkFilled(t, "after the replacements", reports[len(reports)-2:])
	if !strings.Contains(log.String(), "replacing its") {
		t.Errorf("log does not tell of the replacements:\n%s", log.String())
	}
}

// TestRestartReplacesEarlierRunsStuckTransactions is the devnet's failure:
// a load restarted after the fork finds the previous run's Osaka
// transactions in the pool, their fees unknown to it. It replaces them
// (raising fees until the pool takes the replacement) and fills blocks.
func TestRestartReplacesEarlierRunsStuckTransactions(t *testing.T) {
	ctx := context.Background()
	ch, fork := forkingSim(t)
	first := newLoad(t, ch.b, schedulelessClient{ch.c})
	crossStuck(t, ctx, first, ch, fork)
	var log bytes.Buffer
	second := newLoad(t, ch.b, ch.c, load.WithSeed(12), load.WithLog(&log))
	if second.Fork() != load.ForkAmsterdam {
		t.Fatalf("restarted load prices %s, want amsterdam", second.Fork())
	}
	reports := ch.steps(t, ctx, second, 8)
	checkFilled(t, "after the restart's replacements", reports[len(reports)-2:])
	if !strings.Contains(log.String(), "replacing its") {
		t.Errorf("log does not tell of the replacements:\n%s", log.String())
	}
}

// droppingClient accepts every transaction and sends none: the pool never
// has them.
type droppingClient struct{ load.Client }

func (droppingClient) SendTransaction(context.Context, *types.Transaction) error { return nil }

// TestStarvedLoadFailsWithTheCause: a load whose transactions never reach a
// block ends with a *StarvedError that names the blocks, the bytes and what
// it saw, instead of running on below its target.
func TestStarvedLoadFailsWithTheCause(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b := newSim(t, false)
	g := newLoad(t, b, droppingClient{b.Client()})
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx) }()
	var err error
	for i := 0; i < 40 && err == nil; i++ {
		select {
		case err = <-done:
		case <-time.After(20 * time.Millisecond):
			b.Commit()
		}
	}
	if err == nil {
		err = <-done
	}
	var starved *load.StarvedError
	if !errors.As(err, &starved) {
		t.Fatalf("Run = %v, want a *load.StarvedError", err)
	}
	for _, want := range []string{"payloads below half the target in blocks", "of 1048576 B", "lost from the pool"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if starved.Lost == 0 {
		t.Errorf("Lost = 0; the dropped transactions should be counted lost: %v", err)
	}
}
