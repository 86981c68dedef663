package load_test

import (
	"context"
	"math/big"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/eth/ethconfig"
	"github.com/ethereum/go-ethereum/ethclient/simulated"
	"github.com/ethereum/go-ethereum/node"

	"github.com/segdiff/segdiff/load"
)

// devnetGasLimit is what ethereum-package gives a Gloas devnet.
const devnetGasLimit = 200_000_000

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
func newSim(t *testing.T, accts []load.Account, amsterdam bool) *simulated.Backend {
	t.Helper()
	alloc := types.GenesisAlloc{}
	balance, _ := new(big.Int).SetString("1000000000000000000000000", 10)
	for _, a := range accts {
		alloc[a.Address] = types.Account{Balance: balance}
	}
	opts := []func(*node.Config, *ethconfig.Config){simulated.WithBlockGasLimit(devnetGasLimit)}
	if amsterdam {
		opts = append(opts, func(_ *node.Config, c *ethconfig.Config) {
			cfg := *c.Genesis.Config
			zero := uint64(0)
			cfg.AmsterdamTime = &zero
			c.Genesis.Config = &cfg
		})
	}
	b := simulated.NewBackend(alloc, opts...)
	t.Cleanup(func() { _ = b.Close() })
	return b
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
		b.Commit()
	}
	r, err := g.Step(ctx)
	if err != nil {
		t.Fatalf("Step: %v", err)
	}
	return append(out, r...)
}
