package load

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/segdiff/segdiff/eip8411"
	"github.com/segdiff/segdiff/internal/poll"
)

// BlockReport is what the load saw of one block.
type BlockReport struct {
	Number uint64
	// Slot is the beacon slot (WithSlots), or -1.
	Slot int64
	Time time.Time
	// Target is the raw payload size aimed at.
	Target int
	// SentTxs and SentBytes were sent after the previous block, i.e. for
	// this one (bytes as TxPayloadSize counts them).
	SentTxs, SentBytes int
	// IncludedTxs and IncludedBytes are the load's transactions in the block.
	IncludedTxs, IncludedBytes int
	// Payload is the block's estimated payload, everyone's transactions.
	Payload Payload
	// Errors counts the EL's errors by class while sending for this block;
	// Retries the re-sends they caused; Failed the transactions given up
	// after the maximum attempts; Lost the transactions the pool accepted
	// and later no longer had (re-read nonce below the load's).
	Errors  map[ErrorClass]int
	Retries int
	Failed  int
	Lost    int
}

// Fill is the payload's raw size relative to the target.
func (r BlockReport) Fill() float64 { return float64(r.Payload.Raw) / float64(r.Target) }

// Generator sends the load. It is not safe for concurrent use: one goroutine
// calls Step or Run.
type Generator struct {
	p       *parameters
	fork    Fork
	chainID *big.Int
	signer  types.Signer
	rng     *rand.Rand
	senders []*sender
	byAddr  map[common.Address]*sender
	next    int // round-robin position in senders
	fullTx  int // payload bytes of a full transaction

	last      uint64 // newest block observed
	lastOther int    // that block's payload bytes not from the load
	inflight  map[common.Hash]*pendingTx
	sending   map[uint64]*BlockReport // send statistics, by the head they were sent after
}

type sender struct {
	acct    Account
	ep      Endpoint
	nonce   uint64 // next nonce to use
	pending []*pendingTx
	// unknown counts transactions of this account that were pending in the
	// pool when the generator started (a previous run's): they fill blocks
	// too, so they count towards the backlog until blocks include them.
	unknown int
	skip    bool // gave up on a transaction in this step
}

type pendingTx struct {
	hash  common.Hash
	nonce uint64
	size  int
	after uint64 // head when sent
	from  *sender
}

// New connects the generator: it checks that every endpoint serves the same
// chain, resolves the fork (ForkAuto asks the first endpoint), reads every
// account's pending nonce from the endpoint it is bound to, and checks that
// a full block's worth of load fits the head's gas limit and a full
// transaction the fork's per-transaction cap.
func New(ctx context.Context, params ...Parameter) (*Generator, error) {
	p, err := parseAndCheckParameters(params...)
	if err != nil {
		return nil, fmt.Errorf("new load: %w", err)
	}
	g := &Generator{p: p, rng: rand.New(rand.NewPCG(p.seed, p.seed^0x2545f4914f6cdd1d)),
		inflight: map[common.Hash]*pendingTx{}, sending: map[uint64]*BlockReport{}, byAddr: map[common.Address]*sender{}}
	primary := p.endpoints[0]
	if g.chainID, err = primary.Client.ChainID(ctx); err != nil {
		return nil, fmt.Errorf("new load: read chain id from %s: %w", primary.Name, err)
	}
	for _, e := range p.endpoints[1:] {
		id, err := e.Client.ChainID(ctx)
		if err != nil {
			return nil, fmt.Errorf("new load: read chain id from %s: %w", e.Name, err)
		}
		if id.Cmp(g.chainID) != 0 {
			return nil, fmt.Errorf("new load: %s serves chain %s but %s serves %s", e.Name, id, primary.Name, g.chainID)
		}
	}
	g.signer = types.LatestSignerForChainID(g.chainID)
	g.fork = p.fork
	if g.fork == ForkAuto {
		probe := make([]byte, 4<<10)
		eip8411.MainnetLikeWords(g.rng, probe)
		if g.fork, err = DetectFork(ctx, primary.Client, p.accounts[0].Address, probe); err != nil {
			return nil, fmt.Errorf("new load: via %s: %w", primary.Name, err)
		}
	}
	for i, a := range p.accounts {
		s := &sender{acct: a, ep: p.endpoints[i%len(p.endpoints)]}
		if s.nonce, err = s.ep.Client.PendingNonceAt(ctx, a.Address); err != nil {
			return nil, fmt.Errorf("new load: read pending nonce of account %d (%s) from %s: %w", a.Index, a.Address, s.ep.Name, err)
		}
		included, err := s.ep.Client.NonceAt(ctx, a.Address, nil)
		if err != nil {
			return nil, fmt.Errorf("new load: read nonce of account %d (%s) from %s: %w", a.Index, a.Address, s.ep.Name, err)
		}
		if s.nonce > included {
			s.unknown = int(s.nonce - included)
			fmt.Fprintf(p.log, "load: account %d has %d transactions pending from an earlier run; continuing at nonce %d\n", a.Index, s.unknown, s.nonce)
		}
		g.senders = append(g.senders, s)
		g.byAddr[a.Address] = s
	}
	head, err := primary.Client.HeaderByNumber(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("new load: read head from %s: %w", primary.Name, err)
	}
	if err := g.checkCapacity(head); err != nil {
		return nil, fmt.Errorf("new load: %w", err)
	}
	block, err := primary.Client.BlockByNumber(ctx, head.Number)
	if err != nil {
		return nil, fmt.Errorf("new load: read block %s from %s: %w", head.Number, primary.Name, err)
	}
	payload, err := EstimatePayload(block)
	if err != nil {
		return nil, fmt.Errorf("new load: %w", err)
	}
	g.last, g.lastOther = head.Number.Uint64(), payload.Raw
	fmt.Fprintf(p.log, "load: chain %s, %s pricing, %d accounts over %d endpoints, target %d B per block, head %d\n",
		g.chainID, g.fork, len(g.senders), len(p.endpoints), p.payloadBytes, g.last)
	return g, nil
}

// Fork is the pricing rule set in use.
func (g *Generator) Fork() Fork { return g.fork }

// InFlight returns how many of the load's transactions were sent and are
// not yet seen in a block.
func (g *Generator) InFlight() int { return len(g.inflight) }

func (g *Generator) checkCapacity(head *types.Header) error {
	full := make([]byte, g.p.txDataBytes)
	eip8411.MainnetLikeWords(g.rng, full)
	a := g.p.accounts[0]
	gas, err := g.fork.Gas(a.Address, a.Address, full)
	if err != nil {
		return err
	}
	tx, err := types.SignNewTx(a.Key, g.signer, &types.DynamicFeeTx{ChainID: g.chainID, Nonce: 1 << 20, GasTipCap: big.NewInt(1 << 40),
		GasFeeCap: big.NewInt(1 << 42), Gas: gas, To: &a.Address, Data: full})
	if err != nil {
		return fmt.Errorf("sign a sample transaction: %w", err)
	}
	g.fullTx = TxPayloadSize(tx)
	if limit := g.fork.TxGasCap(); limit > 0 && gas > limit {
		return fmt.Errorf("a transaction of %d data bytes needs %d gas under %s pricing, above the per-transaction cap %d; lower the transaction data bytes", g.p.txDataBytes, gas, g.fork, limit)
	}
	perBlock := (uint64(g.p.payloadBytes)/uint64(g.p.txDataBytes) + 1) * gas
	if perBlock > head.GasLimit {
		return fmt.Errorf("%d payload bytes per block need about %d gas under %s pricing, above the block gas limit %d; lower the payload bytes", g.p.payloadBytes, perBlock, g.fork, head.GasLimit)
	}
	return nil
}

// Step observes the blocks since the last step, then tops the load's
// not-yet-included transactions up to one block's worth of the target. It
// returns the observed blocks' reports. An error means a fatal EL answer or
// an RPC failure reading the chain; a transaction given up after retries is
// counted in the next block's report instead.
func (g *Generator) Step(ctx context.Context) ([]BlockReport, error) {
	primary := g.p.endpoints[0]
	head, err := primary.Client.HeaderByNumber(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("load step: read head from %s: %w", primary.Name, err)
	}
	var reports []BlockReport
	for n := g.last + 1; n <= head.Number.Uint64(); n++ {
		b, err := primary.Client.BlockByNumber(ctx, new(big.Int).SetUint64(n))
		if err != nil {
			return reports, fmt.Errorf("load step: read block %d from %s: %w", n, primary.Name, err)
		}
		r, err := g.observe(b)
		if err != nil {
			return reports, fmt.Errorf("load step: %w", err)
		}
		reports = append(reports, r)
		g.last = n
	}
	stats := g.stats(g.last)
	if err := g.reconcile(ctx, stats); err != nil {
		return reports, fmt.Errorf("load step: %w", err)
	}
	if err := g.fill(ctx, head, stats); err != nil {
		return reports, fmt.Errorf("load step: %w", err)
	}
	return reports, nil
}

// stats is the report the sends after head n are counted in (it becomes
// block n+1's).
func (g *Generator) stats(n uint64) *BlockReport {
	r, ok := g.sending[n]
	if !ok {
		r = &BlockReport{Errors: map[ErrorClass]int{}}
		g.sending[n] = r
	}
	return r
}

func (g *Generator) observe(b *types.Block) (BlockReport, error) {
	payload, err := EstimatePayload(b)
	if err != nil {
		return BlockReport{}, err
	}
	r := BlockReport{Errors: map[ErrorClass]int{}}
	if s, ok := g.sending[b.NumberU64()-1]; ok {
		r = *s
		delete(g.sending, b.NumberU64()-1)
	}
	r.Number, r.Time, r.Target, r.Payload, r.Slot = b.NumberU64(), time.Unix(int64(b.Time()), 0), g.p.payloadBytes, payload, -1
	if g.p.slot > 0 && !g.p.genesis.IsZero() {
		r.Slot = int64(r.Time.Sub(g.p.genesis) / g.p.slot)
	}
	for _, tx := range b.Transactions() {
		if pt, ok := g.inflight[tx.Hash()]; ok {
			r.IncludedTxs++
			r.IncludedBytes += pt.size
			g.forget(pt)
			continue
		}
		// One of an earlier run's transactions, or another sender's.
		from, err := types.Sender(g.signer, tx)
		if s, ours := g.byAddr[from]; err == nil && ours {
			r.IncludedTxs++
			r.IncludedBytes += TxPayloadSize(tx)
			s.unknown = max(s.unknown-1, 0)
		}
	}
	g.lastOther = max(payload.Raw-r.IncludedBytes, 0)
	return r, nil
}

// forget drops pt from the in-flight set and its sender's queue.
func (g *Generator) forget(pt *pendingTx) {
	delete(g.inflight, pt.hash)
	s := pt.from
	for i, q := range s.pending {
		if q == pt {
			s.pending = append(s.pending[:i], s.pending[i+1:]...)
			break
		}
	}
}

// reconcile re-reads the pending nonce of every account whose oldest
// in-flight transaction waited more than staleAfterBlocks blocks. A pending nonce
// below the load's means the pool dropped the rest: they are counted as lost
// and their nonces reused. Transactions below it that were never seen in a
// block (replaced, or included before a restart) are forgotten too.
func (g *Generator) reconcile(ctx context.Context, stats *BlockReport) error {
	for _, s := range g.senders {
		if len(s.pending) == 0 || g.last < s.pending[0].after+staleAfterBlocks {
			continue
		}
		n, err := s.ep.Client.PendingNonceAt(ctx, s.acct.Address)
		if err != nil {
			return fmt.Errorf("read pending nonce of account %d from %s: %w", s.acct.Index, s.ep.Name, err)
		}
		for _, pt := range append([]*pendingTx(nil), s.pending...) {
			if pt.nonce >= n {
				stats.Lost++
				g.forget(pt)
			}
		}
		if n < s.nonce {
			fmt.Fprintf(g.p.log, "load: account %d: pool has nonces below %d only, load had sent up to %d; resending\n", s.acct.Index, n, s.nonce-1)
			s.nonce = n
		}
	}
	return nil
}

// fill sends transactions until the in-flight bytes plus the last block's
// other transactions reach the target.
func (g *Generator) fill(ctx context.Context, head *types.Header, stats *BlockReport) error {
	backlog := 0
	for _, pt := range g.inflight {
		backlog += pt.size
	}
	for _, s := range g.senders {
		backlog += s.unknown * g.fullTx
	}
	want := g.p.payloadBytes - g.lastOther - backlog
	for _, s := range g.senders {
		s.skip = false
	}
	baseFee := head.BaseFee
	if baseFee == nil {
		baseFee = new(big.Int)
	}
	for want >= MinTxDataBytes {
		s := g.pick()
		if s == nil {
			fmt.Fprintf(g.p.log, "load: every account has %d transactions pending or gave up this block; %d bytes short of the target\n", maxPendingPerAccount, want)
			return nil
		}
		// Calldata for the rest, less the transaction's own ~120 bytes
		// (signature, fees, nonce) and the list offset.
		n := min(g.p.txDataBytes, want-128)
		if n < MinTxDataBytes {
			return nil
		}
		size, err := g.send(ctx, s, n, baseFee, stats)
		if err != nil {
			return err
		}
		want -= size
	}
	return nil
}

// pick returns the next account round-robin that may send, or nil.
func (g *Generator) pick() *sender {
	for range g.senders {
		s := g.senders[g.next]
		g.next = (g.next + 1) % len(g.senders)
		if !s.skip && len(s.pending) < maxPendingPerAccount {
			return s
		}
	}
	return nil
}

// send signs and sends one transaction of n calldata bytes from s, retrying
// by error class. It returns the bytes the transaction adds to a payload (0
// when given up, which marks s to be skipped for this block).
func (g *Generator) send(ctx context.Context, s *sender, n int, baseFee *big.Int, stats *BlockReport) (int, error) {
	data := make([]byte, n)
	eip8411.MainnetLikeWords(g.rng, data)
	gas, err := g.fork.Gas(s.acct.Address, s.acct.Address, data)
	if err != nil {
		return 0, err
	}
	tip := new(big.Int).Set(g.p.tip)
	// Twice the base fee survives six full blocks of base-fee increases.
	feeCap := new(big.Int).Add(new(big.Int).Mul(baseFee, big.NewInt(2)), tip)
	var size int
	var class ErrorClass
	b := poll.Backoff{Initial: g.p.backoff, Max: g.p.maxBackoff}
	err = poll.Retry(ctx, b, g.p.attempts, func(ctx context.Context) error {
		tx, err := types.SignNewTx(s.acct.Key, g.signer, &types.DynamicFeeTx{
			ChainID: g.chainID, Nonce: s.nonce, GasTipCap: tip, GasFeeCap: feeCap, Gas: gas,
			To: &s.acct.Address, Data: data,
		})
		if err != nil {
			return poll.Stop(fmt.Errorf("sign transaction of account %d: %w", s.acct.Index, err))
		}
		err = s.ep.Client.SendTransaction(ctx, tx)
		class = Classify(err)
		if class != "" {
			stats.Errors[class]++
		}
		switch class {
		case "", ClassKnown:
			size = TxPayloadSize(tx)
			pt := &pendingTx{hash: tx.Hash(), nonce: s.nonce, size: size, after: g.last, from: s}
			s.pending = append(s.pending, pt)
			g.inflight[pt.hash] = pt
			s.nonce++
			stats.SentTxs++
			stats.SentBytes += size
			return nil
		case ClassFatal:
			return poll.Stop(fmt.Errorf("send transaction (nonce %d, %d data bytes, %d gas) from account %d via %s: %w",
				s.nonce, n, gas, s.acct.Index, s.ep.Name, err))
		case ClassNonceLow, ClassNonceGap:
			pn, nerr := s.ep.Client.PendingNonceAt(ctx, s.acct.Address)
			if nerr != nil {
				return poll.Stop(fmt.Errorf("read pending nonce of account %d from %s after %q: %w", s.acct.Index, s.ep.Name, err, nerr))
			}
			for _, pt := range append([]*pendingTx(nil), s.pending...) {
				if pt.nonce >= pn {
					stats.Lost++
					g.forget(pt)
				}
			}
			s.nonce = pn
		case ClassUnderpriced:
			tip = bump(tip)
			feeCap = bump(feeCap)
		case ClassGas:
			regas, rerr := g.redetect(ctx, s, data)
			if rerr != nil {
				return poll.Stop(rerr)
			}
			gas = regas
		}
		return err // retried after the backoff
	}, func(attempt int, err error, wait time.Duration) {
		stats.Retries++
		fmt.Fprintf(g.p.log, "load: account %d via %s: %s (%v); retry %d in %s\n", s.acct.Index, s.ep.Name, class, err, attempt, wait)
	})
	var gaveUp *poll.GaveUpError
	switch {
	case err == nil:
		return size, nil
	case errors.As(err, &gaveUp):
		stats.Failed++
		s.skip = true
		fmt.Fprintf(g.p.log, "load: account %d via %s: gave up after %d attempts: %v\n", s.acct.Index, s.ep.Name, gaveUp.Attempts, gaveUp.Last)
		return 0, nil
	case ctx.Err() != nil:
		return 0, fmt.Errorf("send transaction from account %d: %w", s.acct.Index, err)
	}
	return 0, err
}

// redetect asks s's endpoint for the fork again after the EL refused the
// gas the load computed, and returns data's gas under the answer.
func (g *Generator) redetect(ctx context.Context, s *sender, data []byte) (uint64, error) {
	probe := make([]byte, 4<<10)
	eip8411.MainnetLikeWords(g.rng, probe)
	fork, err := DetectFork(ctx, s.ep.Client, s.acct.Address, probe)
	if err != nil {
		return 0, fmt.Errorf("re-detect the fork via %s: %w", s.ep.Name, err)
	}
	if fork != g.fork {
		fmt.Fprintf(g.p.log, "load: %s reports %s pricing now (was %s)\n", s.ep.Name, fork, g.fork)
		g.fork = fork
	}
	return g.fork.Gas(s.acct.Address, s.acct.Address, data)
}

// bump raises a fee by 12.5 % (rounded up, at least 1 wei): geth's pool
// requires 10 % to replace a transaction.
func bump(v *big.Int) *big.Int {
	inc := new(big.Int).Add(v, big.NewInt(7))
	inc.Div(inc, big.NewInt(8))
	if inc.Sign() == 0 {
		inc.SetInt64(1)
	}
	return inc.Add(inc, v)
}

// Run steps after every new head until ctx ends (nil error) or WithBlocks
// blocks were observed, passing each block's report to WithReport.
func (g *Generator) Run(ctx context.Context) error {
	seen := 0
	for {
		reports, err := g.Step(ctx)
		for _, r := range reports {
			if g.p.report != nil {
				g.p.report(r)
			}
		}
		seen += len(reports)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			// An EL that restarts or a dropped connection must not end a
			// load that runs for hours: try again after the next poll.
			if Classify(err) != ClassTransport {
				return err
			}
			fmt.Fprintf(g.p.log, "load: %v; retrying in %s\n", err, g.p.poll)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(g.p.poll):
			}
			continue
		}
		if g.p.blocks > 0 && seen >= g.p.blocks {
			return nil
		}
		if err := g.waitHead(ctx); err != nil {
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return nil
			}
			return err
		}
	}
}

// waitHead polls until the head moves past the last observed block. Not
// poll.Until: it has no deadline (the load runs until stopped) and waits
// before its first read, the head having just been read.
func (g *Generator) waitHead(ctx context.Context) error {
	primary := g.p.endpoints[0]
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(g.p.poll):
		}
		head, err := primary.Client.HeaderByNumber(ctx, nil)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			fmt.Fprintf(g.p.log, "load: read head from %s: %v; retrying\n", primary.Name, err)
			continue
		}
		if head.Number.Uint64() > g.last {
			return nil
		}
	}
}
