// Package loadtest starts go-ethereum's simulated backend the way the load's
// tests need it: a devnet's gas limit and the load's accounts funded.
package loadtest

import (
	"math/big"
	"net"
	"strconv"
	"testing"

	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/eth/ethconfig"
	"github.com/ethereum/go-ethereum/ethclient/simulated"
	"github.com/ethereum/go-ethereum/node"

	"github.com/segdiff/segdiff/internal/load"
)

// GasLimit is the block gas limit ethereum-package gives a Gloas devnet.
const GasLimit = 200_000_000

// Option changes the simulated node's configuration.
type Option = func(*node.Config, *ethconfig.Config)

// Amsterdam switches the chain to Amsterdam rules from genesis (the
// simulated chain runs Osaka otherwise).
func Amsterdam(_ *node.Config, c *ethconfig.Config) {
	cfg := *c.Genesis.Config
	zero := uint64(0)
	cfg.AmsterdamTime = &zero
	c.Genesis.Config = &cfg
}

// AmsterdamAt schedules Amsterdam rules from the Unix time at on (the chain
// starts on Osaka): a fork the chain crosses once a block's timestamp
// reaches it (Commit seals at the wall clock, AdjustTime jumps ahead).
func AmsterdamAt(at uint64) Option {
	return func(_ *node.Config, c *ethconfig.Config) {
		cfg := *c.Genesis.Config
		// Forks after Amsterdam cannot precede it.
		cfg.AmsterdamTime, cfg.BogotaTime, cfg.UBTTime = &at, nil, nil
		c.Genesis.Config = &cfg
	}
}

// HTTP serves JSON-RPC (eth, net, web3, txpool) on 127.0.0.1:port.
func HTTP(port int) Option {
	return func(n *node.Config, _ *ethconfig.Config) {
		n.HTTPHost, n.HTTPPort, n.HTTPModules, n.HTTPVirtualHosts = "127.0.0.1", port, []string{"eth", "net", "web3", "txpool"}, []string{"*"}
	}
}

// NewHTTPBackend is NewBackend serving JSON-RPC over HTTP on a free
// loopback port; it returns the chain and the endpoint's URL. An ethclient
// dialled there answers raw calls (eth_config, block overrides) that the
// simulated backend's own client hides.
func NewHTTPBackend(t testing.TB, accounts []load.Account, opts ...Option) (*simulated.Backend, string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return NewBackend(t, accounts, append(opts, HTTP(port))...), "http://127.0.0.1:" + strconv.Itoa(port)
}

// NewBackend starts a simulated chain with GasLimit and each account funded
// with a million ether; it is closed when the test ends. Blocks are sealed
// by Commit.
func NewBackend(t testing.TB, accounts []load.Account, opts ...Option) *simulated.Backend {
	t.Helper()
	alloc := types.GenesisAlloc{}
	balance := new(big.Int).Mul(big.NewInt(1_000_000), big.NewInt(1e18))
	for _, a := range accounts {
		alloc[a.Address] = types.Account{Balance: balance}
	}
	b := simulated.NewBackend(alloc, append([]Option{simulated.WithBlockGasLimit(GasLimit)}, opts...)...)
	t.Cleanup(func() { _ = b.Close() })
	return b
}
