package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/big"
	"sort"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/segdiff/segdiff/internal/load"
	"github.com/segdiff/segdiff/internal/stats"
)

func init() {
	register("load", command{
		summary: "fill every block's execution payload to a target size (load --rpc URL [--payload-bytes N])",
		run:     runLoad,
	})
}

// loadFlags are the flags of `segdiff load`.
type loadFlags struct {
	rpcs                  []string
	payloadBytes, txBytes int
	mnemonic              string
	first, accounts       int
	fork                  string
	tipGwei               float64
	blocks                int
	genesis               int64
	slot, poll            time.Duration
	seed                  uint64
}

const loadSynopsis = `usage: segdiff load --rpc URL [flags]
Fills every block's execution payload to a target size: one table row per
block on stdout, progress and retries on stderr.

flags:
`

// parseLoadFlags parses the load's flags; with --help it prints the usage
// to help and returns flag.ErrHelp. Errors are one line naming the flag.
func parseLoadFlags(args []string, help io.Writer) (*loadFlags, error) {
	f := &loadFlags{}
	fs := newFlagSet("load")
	fs.Func("rpc", "EL JSON-RPC URL; repeat or comma-separate for several (required)", func(v string) error {
		for _, u := range strings.Split(v, ",") {
			if u = strings.TrimSpace(u); u != "" {
				f.rpcs = append(f.rpcs, u)
			}
		}
		return nil
	})
	fs.IntVar(&f.payloadBytes, "payload-bytes", load.DefaultPayloadBytes, "target raw (SSZ) execution payload size per block")
	fs.IntVar(&f.txBytes, "tx-bytes", load.DefaultTxDataBytes, "calldata bytes of a full transaction (the pools accept 128 KiB transactions)")
	fs.StringVar(&f.mnemonic, "mnemonic", load.DefaultMnemonic, "mnemonic of the prefunded accounts (default: ethereum-package's)")
	fs.IntVar(&f.first, "first-account", load.DefaultFirstAccount, "first account index m/44'/60'/0'/0/<i> (buildoor, tx_fuzz and spamoor sign with lower ones)")
	fs.IntVar(&f.accounts, "accounts", load.DefaultAccounts, "number of consecutive accounts")
	fs.StringVar(&f.fork, "fork", string(load.ForkAuto), "pricing rules: auto (ask the EL), prague, osaka or amsterdam")
	fs.Float64Var(&f.tipGwei, "tip-gwei", 1, "priority fee per gas, gwei")
	fs.IntVar(&f.blocks, "blocks", 0, "stop after this many blocks (0: until interrupted)")
	fs.Int64Var(&f.genesis, "genesis-time", 0, "genesis unix time, to report slots (0: slots not reported)")
	fs.DurationVar(&f.slot, "slot-duration", 12*time.Second, "slot duration, to report slots")
	fs.DurationVar(&f.poll, "poll", 500*time.Millisecond, "how often to look for a new head")
	fs.Uint64Var(&f.seed, "seed", 0, "calldata seed (0: the start time)")
	pos, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		printHelp(help, loadSynopsis, fs)
	}
	if err != nil {
		return nil, err
	}
	switch {
	case len(pos) > 0:
		return nil, fmt.Errorf("unexpected arguments %q (the load takes flags only)", pos)
	case len(f.rpcs) == 0:
		return nil, errors.New("--rpc is required")
	case f.payloadBytes < load.MinTxDataBytes || f.payloadBytes > load.MaxPayloadBytes:
		return nil, fmt.Errorf("--payload-bytes %d outside [%d, %d] (EIP-7934 caps a block at 8 MiB)", f.payloadBytes, load.MinTxDataBytes, load.MaxPayloadBytes)
	case f.txBytes < load.MinTxDataBytes:
		return nil, fmt.Errorf("--tx-bytes %d below %d", f.txBytes, load.MinTxDataBytes)
	case f.first < 0 || f.accounts < 1:
		return nil, fmt.Errorf("--first-account %d and --accounts %d must be >= 0 and >= 1", f.first, f.accounts)
	case f.tipGwei < 0 || math.IsNaN(f.tipGwei) || math.IsInf(f.tipGwei, 0):
		return nil, fmt.Errorf("--tip-gwei %v must be a non-negative number", f.tipGwei)
	case f.blocks < 0:
		return nil, fmt.Errorf("--blocks %d must be >= 0", f.blocks)
	case f.slot <= 0 || f.poll <= 0:
		return nil, fmt.Errorf("--slot-duration %s and --poll %s must be positive", f.slot, f.poll)
	}
	if _, err := load.ParseFork(f.fork); err != nil {
		return nil, fmt.Errorf("--fork: %w", err)
	}
	return f, nil
}

// runLoad implements `segdiff load`: one table row per block on stdout,
// progress and retries on stderr. Exit 0 when stopped (Ctrl-C or --blocks),
// 1 on failure, 2 on usage errors.
func runLoad(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f, err := parseLoadFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		return usageError(stderr, "load", err)
	}
	if err := loadRun(ctx, f, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "segdiff load: %v\n", err)
		return 1
	}
	return 0
}

func loadRun(ctx context.Context, f *loadFlags, stdout, stderr io.Writer) error {
	accts, err := load.DeriveAccounts(f.mnemonic, f.first, f.accounts)
	if err != nil {
		return err
	}
	fork, _ := load.ParseFork(f.fork)
	tip, _ := new(big.Float).Mul(big.NewFloat(f.tipGwei), big.NewFloat(1e9)).Int(nil)
	table := &loadTable{w: stdout}
	params := []load.Parameter{
		load.WithAccounts(accts), load.WithPayloadBytes(f.payloadBytes), load.WithTxDataBytes(f.txBytes),
		load.WithFork(fork), load.WithTip(tip), load.WithBlocks(f.blocks), load.WithPollInterval(f.poll),
		load.WithLog(stderr), load.WithReport(table.row),
	}
	if f.seed != 0 {
		params = append(params, load.WithSeed(f.seed))
	}
	if f.genesis > 0 {
		params = append(params, load.WithSlots(time.Unix(f.genesis, 0), f.slot))
	}
	for _, u := range f.rpcs {
		c, err := ethclient.DialContext(ctx, u)
		if err != nil {
			return fmt.Errorf("dial %s: %w", u, err)
		}
		defer c.Close()
		params = append(params, load.WithEndpoint(u, c))
	}
	g, err := load.New(ctx, params...)
	if err != nil {
		return err
	}
	err = g.Run(ctx)
	table.summary()
	return err
}

// loadTable prints block reports as aligned rows and a summary.
type loadTable struct {
	w      io.Writer
	rows   int
	fills  []float64
	ratios []float64
}

func (t *loadTable) row(r load.BlockReport) {
	if t.rows == 0 {
		fmt.Fprintf(t.w, "%8s %6s %5s %9s %5s %9s %9s %9s %6s %6s %7s %6s %4s %8s  %s\n",
			"block", "slot", "sent", "sent_B", "incl", "incl_B", "raw_B", "snappy_B", "ratio", "fill", "retries", "failed", "lost", "replaced", "errors")
	}
	t.rows++
	slot := "-"
	if r.Slot >= 0 {
		slot = fmt.Sprint(r.Slot)
	}
	t.fills = append(t.fills, r.Fill())
	t.ratios = append(t.ratios, r.Payload.Ratio())
	fmt.Fprintf(t.w, "%8d %6s %5d %9d %5d %9d %9d %9d %6.3f %6.3f %7d %6d %4d %8d  %s\n",
		r.Number, slot, r.SentTxs, r.SentBytes, r.IncludedTxs, r.IncludedBytes, r.Payload.Raw, r.Payload.Compressed,
		r.Payload.Ratio(), r.Fill(), r.Retries, r.Failed, r.Lost, r.Replaced, formatErrors(r.Errors))
}

func (t *loadTable) summary() {
	if t.rows == 0 {
		fmt.Fprintln(t.w, "no blocks observed")
		return
	}
	lo, hi := stats.Range(t.fills)
	fmt.Fprintf(t.w, "%d blocks: fill min %.3f median %.3f max %.3f; snappy ratio median %.3f\n",
		t.rows, lo, stats.Median(t.fills), hi, stats.Median(t.ratios))
}

func formatErrors(m map[load.ErrorClass]int) string {
	if len(m) == 0 {
		return "-"
	}
	parts := make([]string, 0, len(m))
	for c, n := range m {
		parts = append(parts, fmt.Sprintf("%s=%d", c, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}
