package load

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"
)

// forkLead is how long before the EL's next fork the load prices every
// transaction for both sides of it. A transaction priced for the old rules
// alone and still in the pool at the fork is never included when the new
// rules ask more gas (geth keeps it, and the account's later nonces wait
// behind it), so transactions that may be included after the fork carry
// the larger of the two gas limits, which is valid under both.
const forkLead = 2 * time.Minute

// nextFork is the EL's next scheduled fork and its pricing.
type nextFork struct {
	at   time.Time
	fork Fork
}

// rawClient is an EL client that also answers raw JSON-RPC (ethclient's
// Client does, and so does the simulated backend's); eth_config and block
// overrides have no typed call.
type rawClient interface {
	Client() *rpc.Client
}

// ethConfig is the part of EIP-7910's eth_config answer the load reads.
type ethConfig struct {
	Next *struct {
		ActivationTime uint64 `json:"activationTime"` // a JSON number (EIP-7910)
	} `json:"next"`
}

// errNoSchedule means the EL does not say when its next fork is.
var errNoSchedule = errors.New("the EL does not report its fork schedule")

// readNextFork asks c for its next fork (eth_config, EIP-7910) and the
// pricing rules that fork brings (an estimate of probe at the fork's time,
// DetectForkAt). ok is false when no fork is scheduled; errNoSchedule
// when c cannot say.
func readNextFork(ctx context.Context, c Client, from common.Address, probe []byte) (next nextFork, ok bool, err error) {
	raw, isRaw := c.(rawClient)
	if !isRaw {
		return nextFork{}, false, errNoSchedule
	}
	var cfg ethConfig
	if err := raw.Client().CallContext(ctx, &cfg, "eth_config"); err != nil {
		if isMethodNotFound(err) {
			return nextFork{}, false, fmt.Errorf("%w: eth_config: %v", errNoSchedule, err)
		}
		return nextFork{}, false, fmt.Errorf("read the fork schedule (eth_config): %w", err)
	}
	if cfg.Next == nil {
		return nextFork{}, false, nil
	}
	at := time.Unix(int64(cfg.Next.ActivationTime), 0)
	f, err := DetectForkAt(ctx, raw.Client(), from, probe, at)
	if err != nil {
		return nextFork{}, false, fmt.Errorf("pricing of the fork at %s: %w", at.UTC().Format(time.RFC3339), err)
	}
	return nextFork{at: at, fork: f}, true, nil
}

func isMethodNotFound(err error) bool {
	var rpcErr rpc.Error
	if errors.As(err, &rpcErr) && rpcErr.ErrorCode() == -32601 {
		return true
	}
	return strings.Contains(strings.ToLower(err.Error()), "method not found") ||
		strings.Contains(strings.ToLower(err.Error()), "does not exist")
}

// estimateAt estimates a call's gas as if the next block had timestamp at
// (eth_estimateGas with a block override; geth applies the fork rules of the
// overridden time).
type estimateAt struct {
	c  *rpc.Client
	at time.Time
}

func (e estimateAt) EstimateGas(ctx context.Context, msg ethereum.CallMsg) (uint64, error) {
	args := map[string]any{"from": msg.From, "to": msg.To, "data": hexutil.Bytes(msg.Data)}
	overrides := map[string]any{"time": hexutil.Uint64(e.at.Unix())}
	var gas hexutil.Uint64
	if err := e.c.CallContext(ctx, &gas, "eth_estimateGas", args, "latest", nil, overrides); err != nil {
		return 0, err
	}
	return uint64(gas), nil
}

// DetectForkAt is DetectFork for a block at time at: the pricing rules the
// EL will apply then.
func DetectForkAt(ctx context.Context, c *rpc.Client, from common.Address, probe []byte, at time.Time) (Fork, error) {
	return DetectFork(ctx, estimateAt{c: c, at: at}, from, probe)
}
