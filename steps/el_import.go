package steps

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/segdiff/segdiff/assertions"
	"github.com/segdiff/segdiff/internal/devnet"
	"github.com/segdiff/segdiff/internal/elimport"
)

// elImported checks that every node's EL holds the block each warm slot's
// bid committed to, by reveal + budget (elimport.Check).
func (s *Suite) elImported(ctx context.Context, budget string) error {
	st, o, err := single(ctx)
	if err != nil {
		return err
	}
	b, err := envBudget("EL_IMPORT_MAX", budget)
	if err != nil {
		return err
	}
	check := fmt.Sprintf("warm payloads found on every EL within %s of the reveal", assertions.UnitSeconds.Format(b.value))
	samples, err := checkELs(ctx, o, b.value, s.cfg.PollInterval)
	if err == nil {
		v := assertions.EverySlotAtLeast(check, assertions.UnitShare, samples, 1)
		v.Source = "execution JSON-RPC (eth_getBlockByHash); reveal from the " + st.source()
		return st.record(v, b)
	}
	return st.fail(check, assertions.UnitShare, assertions.OpAtLeast, 1, err)
}

// checkELs dials every node's EL, reads each warm slot's bid block hash and
// reveal, runs elimport.Check polling every interval, and closes the
// clients it dialled.
func checkELs(ctx context.Context, o *observation, budget float64, interval time.Duration) ([]assertions.Sample, error) {
	ex, ok := o.d.(devnet.Execution)
	if !ok {
		return nil, fmt.Errorf("the %s backend has no execution clients to ask", o.d.Backend())
	}
	urls, err := ex.ELRPCURLs(ctx)
	if err != nil {
		return nil, err
	}
	var els []elimport.EL
	for _, n := range o.nodes {
		if u, ok := urls[n.ID]; ok {
			c, err := ethclient.DialContext(ctx, u)
			if err != nil {
				return nil, fmt.Errorf("dial the EL of node %s at %s: %w", n.ID, u, err)
			}
			defer c.Close()
			els = append(els, elimport.EL{Node: n.ID, Link: string(n.LinkClass), Client: c})
		}
	}
	sort.Slice(els, func(i, j int) bool { return els[i].Node < els[j].Node })
	reveals := o.net.Reveals()
	var payloads []elimport.Payload
	for _, slot := range o.slots {
		h, err := ex.BidBlockHash(ctx, slot)
		if err != nil {
			return nil, err
		}
		// Never wait longer than the budget from now: the node clocks that
		// timed the reveal may be ahead of ours.
		d := time.Duration(budget * float64(time.Second))
		payloads = append(payloads, elimport.Payload{Slot: slot, Hash: h, Deadline: earliest(reveals[slot].At.Add(d), time.Now().Add(d))})
	}
	return elimport.Check(ctx, els, payloads, interval)
}

func earliest(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
