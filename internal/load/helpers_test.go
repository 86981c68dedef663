package load_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient/simulated"

	"github.com/segdiff/segdiff/internal/load"
	"github.com/segdiff/segdiff/internal/load/loadtest"
)

// testAccounts are the load's default accounts of the default mnemonic
// (derived once: PBKDF2 is slow under -race).
var testAccounts = sync.OnceValues(func() ([]load.Account, error) {
	return load.DeriveAccounts(load.DefaultMnemonic, load.DefaultFirstAccount, load.DefaultAccounts)
})

func accounts(t *testing.T) []load.Account {
	t.Helper()
	a, err := testAccounts()
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// newSim starts a simulated chain (Osaka rules unless amsterdam) with the
// accounts funded and a devnet's gas limit.
func newSim(t *testing.T, amsterdam bool) *simulated.Backend {
	t.Helper()
	accts := accounts(t)
	if amsterdam {
		return loadtest.NewBackend(t, accts, loadtest.Amsterdam)
	}
	return loadtest.NewBackend(t, accts)
}

// newLoad starts a generator on accounts(t) sending through c (the
// simulated chain b's client when nil) with fastParams and extra.
func newLoad(t *testing.T, b *simulated.Backend, c load.Client, extra ...load.Parameter) *load.Generator {
	t.Helper()
	if c == nil {
		c = b.Client()
	}
	g, err := load.New(context.Background(), fastParams(append([]load.Parameter{load.WithEndpoint("sim", c), load.WithAccounts(accounts(t))}, extra...)...)...)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// fastParams keep retries and polling in milliseconds.
func fastParams(extra ...load.Parameter) []load.Parameter {
	return append([]load.Parameter{load.WithSeed(11), load.WithBackoff(time.Millisecond, 4*time.Millisecond), load.WithPollInterval(5 * time.Millisecond)}, extra...)
}

// faultyClient returns the queued errors from SendTransaction, one per call,
// before passing calls through.
type faultyClient struct {
	load.Client
	mu     sync.Mutex
	errs   []error
	sends  int
	failed int
}

func (f *faultyClient) SendTransaction(ctx context.Context, tx *types.Transaction) error {
	f.mu.Lock()
	f.sends++
	if len(f.errs) > 0 {
		err := f.errs[0]
		f.errs = f.errs[1:]
		f.failed++
		f.mu.Unlock()
		return err
	}
	f.mu.Unlock()
	return f.Client.SendTransaction(ctx, tx)
}

// steps runs n rounds of Step then Commit (the simulated chain's slot) and
// returns every block report.
func steps(t *testing.T, ctx context.Context, g *load.Generator, b *simulated.Backend, n int) []load.BlockReport {
	t.Helper()
	var out []load.BlockReport
	for range n {
		r, err := g.Step(ctx)
		if err != nil {
			t.Fatalf("Step: %v", err)
		}
		out = append(out, r...)
		waitInPool(t, ctx, g, b)
		b.Commit()
	}
	r, err := g.Step(ctx)
	if err != nil {
		t.Fatalf("Step: %v", err)
	}
	return append(out, r...)
}

// runSealing runs g until it returns, sealing a block whenever the load has
// sent its block's worth (at most 200 blocks).
func runSealing(t *testing.T, ctx context.Context, g *load.Generator, b *simulated.Backend) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx) }()
	for i := 0; i < 200 && len(done) == 0; i++ {
		waitPending(t, ctx, b)
		b.Commit()
	}
	return <-done
}

// waitPending waits until the simulated pool holds transactions and has
// stopped growing for 20 ms, or a second has passed: the load has sent its
// block's worth.
// waitInPool waits until the simulated pool holds every transaction the
// load has in flight: the pool promotes transactions on its own goroutine,
// so a block sealed right after sending could miss some on a busy machine.
func waitInPool(t *testing.T, ctx context.Context, g *load.Generator, b *simulated.Backend) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := b.Client().PendingTransactionCount(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if int(n) >= g.InFlight() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pool holds %d pending transactions after 10 s, the load has %d in flight", n, g.InFlight())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func waitPending(t *testing.T, ctx context.Context, b *simulated.Backend) {
	t.Helper()
	last, stable := uint(0), 0
	for range 100 {
		time.Sleep(10 * time.Millisecond)
		n, err := b.Client().PendingTransactionCount(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 && n == last {
			if stable++; stable >= 2 {
				return
			}
		} else {
			stable = 0
		}
		last = n
	}
}
