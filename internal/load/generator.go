package load

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
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
	// and later no longer had (re-read nonce below the load's); Replaced
	// the transactions the pool held but no block included (re-sent at
	// the same nonce with the current pricing and higher fees).
	Errors   map[ErrorClass]int
	Retries  int
	Failed   int
	Lost     int
	Replaced int
}

// Fill is the payload's raw size relative to the target.
func (r BlockReport) Fill() float64 { return float64(r.Payload.Raw) / float64(r.Target) }

// Generator sends the load. It is not safe for concurrent use: one goroutine
// calls Step or Run.
type Generator struct {
	p        *parameters
	fork     Fork      // the pricing of the head's rules
	upcoming *nextFork // the EL's next fork, nil when none is scheduled or the EL cannot say
	chainID  *big.Int
	signer   types.Signer
	rng      *rand.Rand
	senders  []*sender
	byAddr   map[common.Address]*sender
	next     int // round-robin position in senders
	fullTx   int // payload bytes of a full transaction

	last      uint64                  // newest block observed
	lastOther int                     // that block's payload bytes not from the load
	sending   map[uint64]*BlockReport // send statistics, by the head they were sent after
	observed  int                     // blocks observed
	short     shortRun                // the current run of blocks below half the target
}

type sender struct {
	acct  Account
	ep    Endpoint
	nonce uint64 // next nonce to use
	// pending are the account's transactions sent and not yet seen in a
	// block, by nonce; those a previous run left in the pool are among
	// them (unknown hash and fees, a full transaction's size), as they fill
	// blocks too.
	pending []*pendingTx
	skip    bool // gave up on a transaction in this step
}

type pendingTx struct {
	nonce       uint64
	size        int      // bytes it adds to a payload
	dataBytes   int      // its calldata
	tip, feeCap *big.Int // nil for a previous run's
	after       uint64   // head when sent (or found, or last replaced)
	replaced    int      // times re-sent at its nonce
}

// shortRun is a run of consecutive blocks whose payload stayed below half
// the target although the load was running, with what the load saw in them.
type shortRun struct {
	blocks   int
	first    uint64
	errors   map[ErrorClass]int
	replaced int
	lost     int
	failed   int
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
		sending: map[uint64]*BlockReport{}, byAddr: map[common.Address]*sender{}}
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
		if g.fork, err = DetectFork(ctx, primary.Client, p.accounts[0].Address, g.probe()); err != nil {
			return nil, fmt.Errorf("new load: via %s: %w", primary.Name, err)
		}
	}
	if err := g.readSchedule(ctx); err != nil {
		return nil, fmt.Errorf("new load: %w", err)
	}
	head, err := primary.Client.HeaderByNumber(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("new load: read head from %s: %w", primary.Name, err)
	}
	if err := g.checkCapacity(head); err != nil {
		return nil, fmt.Errorf("new load: %w", err)
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
			fmt.Fprintf(p.log, "load: account %d has %d transactions pending from an earlier run; continuing at nonce %d\n", a.Index, s.nonce-included, s.nonce)
			for n := included; n < s.nonce; n++ {
				s.pending = append(s.pending, &pendingTx{nonce: n, size: g.fullTx, dataBytes: p.txDataBytes, after: head.Number.Uint64()})
			}
		}
		g.senders = append(g.senders, s)
		g.byAddr[a.Address] = s
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

// probe is the calldata fork detection prices: 4 KiB, as the load's own.
func (g *Generator) probe() []byte {
	probe := make([]byte, 4<<10)
	eip8411.MainnetLikeWords(g.rng, probe)
	return probe
}

// readSchedule asks the primary endpoint for its next fork. An EL that
// cannot say is logged once: the load then learns a fork from the EL's
// rejections and from transactions no block includes.
func (g *Generator) readSchedule(ctx context.Context) error {
	primary := g.p.endpoints[0]
	next, ok, err := readNextFork(ctx, primary.Client, g.p.accounts[0].Address, g.probe())
	switch {
	case err != nil && ctx.Err() != nil:
		return fmt.Errorf("via %s: %w", primary.Name, err)
	case err != nil:
		// An EL without eth_config, or without block overrides on
		// eth_estimateGas, still runs the load: stuck transactions are
		// replaced once blocks stop taking them (reconcile).
		fmt.Fprintf(g.p.log, "load: %s: %v; a fork is noticed only from the EL's rejections and from transactions no block includes\n", primary.Name, err)
		g.upcoming = nil
		return nil
	case !ok:
		g.upcoming = nil
		return nil
	}
	g.upcoming = &next
	if next.fork != g.fork {
		fmt.Fprintf(g.p.log, "load: %s schedules a fork at %s: %s pricing after it (now %s); priced for both from %s before it\n",
			primary.Name, next.at.UTC().Format(time.RFC3339), next.fork, g.fork, forkLead)
	}
	return nil
}

// pricing returns the forks whose rules a transaction sent after head may be
// included under: the head's, and the next fork's once head is within
// forkLead of it.
func (g *Generator) pricing(head *types.Header) []Fork {
	forks := []Fork{g.fork}
	if g.upcoming != nil && g.upcoming.fork != g.fork && !time.Unix(int64(head.Time), 0).Add(forkLead).Before(g.upcoming.at) {
		forks = append(forks, g.upcoming.fork)
	}
	return forks
}

// gas is the gas limit that makes a transaction of data valid under every
// fork in forks.
func gas(forks []Fork, from, to common.Address, data []byte) (uint64, error) {
	var most uint64
	for _, f := range forks {
		g, err := f.Gas(from, to, data)
		if err != nil {
			return 0, err
		}
		most = max(most, g)
	}
	return most, nil
}

// passFork moves the pricing to the next fork once head is at or past it,
// and reads the schedule again.
func (g *Generator) passFork(ctx context.Context, head *types.Header) error {
	if g.upcoming == nil || time.Unix(int64(head.Time), 0).Before(g.upcoming.at) {
		return nil
	}
	if g.upcoming.fork != g.fork {
		fmt.Fprintf(g.p.log, "load: block %d is past the fork at %s: %s pricing (was %s)\n",
			head.Number, g.upcoming.at.UTC().Format(time.RFC3339), g.upcoming.fork, g.fork)
	}
	g.fork = g.upcoming.fork
	return g.readSchedule(ctx)
}

// Fork is the pricing rule set in use.
func (g *Generator) Fork() Fork { return g.fork }

// InFlight returns how many of the load's transactions were sent and are
// not yet seen in a block.
func (g *Generator) InFlight() int {
	n := 0
	for _, s := range g.senders {
		n += len(s.pending)
	}
	return n
}

func (g *Generator) checkCapacity(head *types.Header) error {
	forks := []Fork{g.fork}
	if g.upcoming != nil {
		forks = append(forks, g.upcoming.fork)
	}
	full := make([]byte, g.p.txDataBytes)
	eip8411.MainnetLikeWords(g.rng, full)
	a := g.p.accounts[0]
	for _, f := range forks {
		gas, err := f.Gas(a.Address, a.Address, full)
		if err != nil {
			return err
		}
		if limit := f.TxGasCap(); limit > 0 && gas > limit {
			return fmt.Errorf("a transaction of %d data bytes needs %d gas under %s pricing, above the per-transaction cap %d; lower the transaction data bytes", g.p.txDataBytes, gas, f, limit)
		}
		perBlock := (uint64(g.p.payloadBytes)/uint64(g.p.txDataBytes) + 1) * gas
		if perBlock > head.GasLimit {
			return fmt.Errorf("%d payload bytes per block need about %d gas under %s pricing, above the block gas limit %d; lower the payload bytes", g.p.payloadBytes, perBlock, f, head.GasLimit)
		}
	}
	tx, err := types.SignNewTx(a.Key, g.signer, &types.DynamicFeeTx{ChainID: g.chainID, Nonce: 1 << 20, GasTipCap: big.NewInt(1 << 40),
		GasFeeCap: big.NewInt(1 << 42), Gas: 1 << 24, To: &a.Address, Data: full})
	if err != nil {
		return fmt.Errorf("sign a sample transaction: %w", err)
	}
	g.fullTx = TxPayloadSize(tx)
	return nil
}

// Step observes the blocks since the last step, then tops the load's
// not-yet-included transactions up to one block's worth of the target. It
// returns the observed blocks' reports. An error means a fatal EL answer, an
// RPC failure reading the chain, or payloads that stayed below half the
// target for starvedAfterBlocks blocks (a *StarvedError naming what the
// load saw); a transaction given up after retries is counted in the next
// block's report instead.
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
		if err := g.track(r); err != nil {
			return reports, err
		}
	}
	if err := g.passFork(ctx, head); err != nil {
		return reports, fmt.Errorf("load step: %w", err)
	}
	stats := g.stats(g.last)
	if err := g.reconcile(ctx, head, stats); err != nil {
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
		from, err := types.Sender(g.signer, tx)
		s, ours := g.byAddr[from]
		if err != nil || !ours {
			continue // another sender's
		}
		r.IncludedTxs++
		r.IncludedBytes += TxPayloadSize(tx)
		s.included(tx.Nonce())
	}
	g.lastOther = max(payload.Raw-r.IncludedBytes, 0)
	g.observed++
	return r, nil
}

// included drops the pending transactions at or below nonce: that nonce is
// used, so they are in a block or can never be.
func (s *sender) included(nonce uint64) {
	i := 0
	for i < len(s.pending) && s.pending[i].nonce <= nonce {
		i++
	}
	s.pending = s.pending[i:]
}

// dropFrom drops the pending transactions at or above nonce and returns how
// many there were.
func (s *sender) dropFrom(nonce uint64) int {
	for i, pt := range s.pending {
		if pt.nonce >= nonce {
			n := len(s.pending) - i
			s.pending = s.pending[:i]
			return n
		}
	}
	return 0
}

// starvedAfterBlocks is how many consecutive blocks below half the target
// end the load: twice staleAfterBlocks, so that stuck transactions were
// replaced once and their replacements had as long again.
const starvedAfterBlocks = 2 * staleAfterBlocks

// StarvedError ends a load that cannot keep payloads at their target: the
// blocks were below half of it, and the error says what the load saw in
// them.
type StarvedError struct {
	First, Last  uint64 // the run of short blocks
	LastBytes    int    // the last block's raw payload bytes
	Target       int
	Fork         Fork
	InFlight     int    // transactions sent and not in a block
	Oldest       uint64 // the head the oldest of them was sent after (or found, or last replaced)
	Replaced     int
	Lost         int
	Failed       int
	Errors       map[ErrorClass]int
	ScheduleNote string
}

func (e *StarvedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "load: payloads below half the target in blocks %d-%d (block %d: %d B of %d B) under %s pricing",
		e.First, e.Last, e.Last, e.LastBytes, e.Target, e.Fork)
	switch {
	case e.InFlight > 0:
		fmt.Fprintf(&b, "; %d transactions wait in the pool, the oldest since block %d", e.InFlight, e.Oldest)
	default:
		b.WriteString("; none of the load's transactions is waiting")
	}
	fmt.Fprintf(&b, "; %d replaced, %d lost from the pool, %d given up", e.Replaced, e.Lost, e.Failed)
	if len(e.Errors) > 0 {
		fmt.Fprintf(&b, "; EL errors %s", formatClasses(e.Errors))
	}
	if e.ScheduleNote != "" {
		b.WriteString("; " + e.ScheduleNote)
	}
	return b.String()
}

func formatClasses(m map[ErrorClass]int) string {
	parts := make([]string, 0, len(m))
	for _, c := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s=%d", c, m[c]))
	}
	return strings.Join(parts, " ")
}

// track counts r into the run of blocks below half the target and returns
// a *StarvedError once the run is starvedAfterBlocks long. The first two
// blocks are the load's start (sent before it ran) and do not count.
func (g *Generator) track(r BlockReport) error {
	if g.observed <= 2 || r.Fill() >= 0.5 {
		g.short = shortRun{}
		return nil
	}
	if g.short.blocks == 0 {
		g.short = shortRun{first: r.Number, errors: map[ErrorClass]int{}}
	}
	g.short.blocks++
	g.short.replaced += r.Replaced
	g.short.lost += r.Lost
	g.short.failed += r.Failed
	for c, n := range r.Errors {
		g.short.errors[c] += n
	}
	if g.short.blocks < starvedAfterBlocks {
		return nil
	}
	e := &StarvedError{First: g.short.first, Last: r.Number, LastBytes: r.Payload.Raw, Target: r.Target, Fork: g.fork,
		InFlight: g.InFlight(), Oldest: r.Number, Replaced: g.short.replaced, Lost: g.short.lost, Failed: g.short.failed, Errors: g.short.errors}
	for _, s := range g.senders {
		if len(s.pending) > 0 {
			e.Oldest = min(e.Oldest, s.pending[0].after)
		}
	}
	if g.upcoming != nil {
		e.ScheduleNote = fmt.Sprintf("next fork at %s (%s pricing)", g.upcoming.at.UTC().Format(time.RFC3339), g.upcoming.fork)
	}
	return e
}

// reconcile looks at every account whose oldest pending transaction waited
// staleAfterBlocks blocks. A pending nonce below the load's means the pool
// dropped the rest: they are counted as lost and their nonces reused. A
// pool that still holds them while the chain's nonce stays at the oldest
// one means no block takes it (priced for rules that no longer hold, say):
// every pending transaction of the account is replaced at its nonce.
func (g *Generator) reconcile(ctx context.Context, head *types.Header, stats *BlockReport) error {
	for _, s := range g.senders {
		if len(s.pending) == 0 || g.last < s.pending[0].after+staleAfterBlocks {
			continue
		}
		n, err := s.ep.Client.PendingNonceAt(ctx, s.acct.Address)
		if err != nil {
			return fmt.Errorf("read pending nonce of account %d from %s: %w", s.acct.Index, s.ep.Name, err)
		}
		stats.Lost += s.dropFrom(n)
		if n < s.nonce {
			fmt.Fprintf(g.p.log, "load: account %d: pool has nonces below %d only, load had sent up to %d; resending\n", s.acct.Index, n, s.nonce-1)
			s.nonce = n
		}
		if len(s.pending) == 0 {
			continue
		}
		included, err := s.ep.Client.NonceAt(ctx, s.acct.Address, nil)
		if err != nil {
			return fmt.Errorf("read nonce of account %d from %s: %w", s.acct.Index, s.ep.Name, err)
		}
		if included > 0 {
			s.included(included - 1)
		}
		if len(s.pending) == 0 || s.pending[0].nonce != included {
			continue
		}
		if g.upcoming == nil {
			// No schedule to say whether a fork passed: ask the EL's rules.
			if err := g.redetect(ctx, s); err != nil {
				return err
			}
		}
		fmt.Fprintf(g.p.log, "load: account %d: nonce %d waited %d blocks in the pool of %s; replacing its %d pending transactions under %v pricing\n",
			s.acct.Index, included, g.last-s.pending[0].after, s.ep.Name, len(s.pending), g.pricing(head))
		for _, pt := range slices.Clone(s.pending) {
			if err := g.replace(ctx, s, pt, head, stats); err != nil {
				return err
			}
		}
	}
	return nil
}

// fill sends transactions until the in-flight bytes plus the last block's
// other transactions reach the target.
func (g *Generator) fill(ctx context.Context, head *types.Header, stats *BlockReport) error {
	backlog := 0
	for _, s := range g.senders {
		for _, pt := range s.pending {
			backlog += pt.size
		}
	}
	want := g.p.payloadBytes - g.lastOther - backlog
	for _, s := range g.senders {
		s.skip = false
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
		size, err := g.send(ctx, s, n, head, stats)
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

// fees are a fresh transaction's: the load's tip, and a fee cap of twice
// the base fee plus the tip, which survives six full blocks of base-fee
// increases.
func (g *Generator) fees(head *types.Header) (tip, feeCap *big.Int) {
	baseFee := head.BaseFee
	if baseFee == nil {
		baseFee = new(big.Int)
	}
	tip = new(big.Int).Set(g.p.tip)
	return tip, new(big.Int).Add(new(big.Int).Mul(baseFee, big.NewInt(2)), tip)
}

// send signs and sends one transaction of n calldata bytes from s at its
// next nonce. It returns the bytes the transaction adds to a payload (0 when
// given up, which marks s to be skipped for this block).
func (g *Generator) send(ctx context.Context, s *sender, n int, head *types.Header, stats *BlockReport) (int, error) {
	tip, feeCap := g.fees(head)
	pt := &pendingTx{nonce: s.nonce, dataBytes: n, tip: tip, feeCap: feeCap}
	ok, err := g.submit(ctx, s, pt, head, stats, false)
	if err != nil || !ok {
		return 0, err
	}
	s.pending = append(s.pending, pt)
	s.nonce++
	stats.SentTxs++
	stats.SentBytes += pt.size
	return pt.size, nil
}

// replace re-sends pt at its nonce with the current pricing and fees above
// its own (geth replaces a transaction for 10 % more), or, for a previous
// run's whose fees are unknown, fresh fees raised until the pool takes it.
func (g *Generator) replace(ctx context.Context, s *sender, pt *pendingTx, head *types.Header, stats *BlockReport) error {
	tip, feeCap := g.fees(head)
	if pt.tip != nil {
		tip = bigMax(tip, bump(pt.tip))
		feeCap = bigMax(feeCap, bump(pt.feeCap))
	}
	next := &pendingTx{nonce: pt.nonce, dataBytes: pt.dataBytes, tip: tip, feeCap: feeCap, replaced: pt.replaced + 1}
	ok, err := g.submit(ctx, s, next, head, stats, true)
	if err != nil || !ok {
		return err
	}
	*pt = *next
	stats.Replaced++
	return nil
}

func bigMax(a, b *big.Int) *big.Int {
	if a.Cmp(b) >= 0 {
		return a
	}
	return b
}

// submit signs pt (its nonce, calldata size and fees) with gas for every
// fork it may be included under and sends it, retrying by error class. On
// success it fills in pt's size and the head it was sent after, and returns
// true. It returns false when it gave up (counted, s skipped for this block)
// or, replacing, when the nonce was used meanwhile (pt dropped from s).
func (g *Generator) submit(ctx context.Context, s *sender, pt *pendingTx, head *types.Header, stats *BlockReport, replacing bool) (bool, error) {
	data := make([]byte, pt.dataBytes)
	eip8411.MainnetLikeWords(g.rng, data)
	limit, err := gas(g.pricing(head), s.acct.Address, s.acct.Address, data)
	if err != nil {
		return false, err
	}
	used := false
	var class ErrorClass
	b := poll.Backoff{Initial: g.p.backoff, Max: g.p.maxBackoff}
	err = poll.Retry(ctx, b, g.p.attempts, func(ctx context.Context) error {
		if !replacing {
			pt.nonce = s.nonce
		}
		tx, err := types.SignNewTx(s.acct.Key, g.signer, &types.DynamicFeeTx{
			ChainID: g.chainID, Nonce: pt.nonce, GasTipCap: pt.tip, GasFeeCap: pt.feeCap, Gas: limit,
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
			pt.size, pt.after = TxPayloadSize(tx), g.last
			return nil
		case ClassFatal:
			return poll.Stop(fmt.Errorf("send transaction (nonce %d, %d data bytes, %d gas) from account %d via %s: %w",
				pt.nonce, len(data), limit, s.acct.Index, s.ep.Name, err))
		case ClassNonceLow, ClassNonceGap:
			pn, nerr := s.ep.Client.PendingNonceAt(ctx, s.acct.Address)
			if nerr != nil {
				return poll.Stop(fmt.Errorf("read pending nonce of account %d from %s after %q: %w", s.acct.Index, s.ep.Name, err, nerr))
			}
			if replacing && class == ClassNonceLow {
				// A block took the nonce while the load was replacing it.
				s.included(pt.nonce)
				used = true
				return nil
			}
			stats.Lost += s.dropFrom(pn)
			s.nonce = pn
		case ClassUnderpriced:
			pt.tip, pt.feeCap = bump(pt.tip), bump(pt.feeCap)
		case ClassGas:
			if rerr := g.redetect(ctx, s); rerr != nil {
				return poll.Stop(rerr)
			}
			regas, rerr := gas(g.pricing(head), s.acct.Address, s.acct.Address, data)
			if rerr != nil {
				return poll.Stop(rerr)
			}
			limit = max(limit, regas)
		}
		return err // retried after the backoff
	}, func(attempt int, err error, wait time.Duration) {
		stats.Retries++
		fmt.Fprintf(g.p.log, "load: account %d via %s: %s (%v); retry %d in %s\n", s.acct.Index, s.ep.Name, class, err, attempt, wait)
	})
	var gaveUp *poll.GaveUpError
	switch {
	case err == nil:
		return !used, nil
	case errors.As(err, &gaveUp):
		stats.Failed++
		s.skip = true
		fmt.Fprintf(g.p.log, "load: account %d via %s: gave up after %d attempts: %v\n", s.acct.Index, s.ep.Name, gaveUp.Attempts, gaveUp.Last)
		return false, nil
	case ctx.Err() != nil:
		return false, fmt.Errorf("send transaction from account %d: %w", s.acct.Index, err)
	}
	return false, err
}

// redetect asks s's endpoint for the pricing rules again (after the EL
// refused the gas the load computed, or when transactions stop being
// included and the EL does not report its fork schedule).
func (g *Generator) redetect(ctx context.Context, s *sender) error {
	fork, err := DetectFork(ctx, s.ep.Client, s.acct.Address, g.probe())
	if err != nil {
		return fmt.Errorf("re-detect the fork via %s: %w", s.ep.Name, err)
	}
	if fork != g.fork {
		fmt.Fprintf(g.p.log, "load: %s reports %s pricing now (was %s)\n", s.ep.Name, fork, g.fork)
		g.fork = fork
	}
	return nil
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
			var starved *StarvedError
			if errors.As(err, &starved) || Classify(err) != ClassTransport {
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
