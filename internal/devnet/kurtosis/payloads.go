package kurtosis

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/segdiff/segdiff/internal/beacon"
	"github.com/segdiff/segdiff/metrics"
)

// PayloadRun is a run of consecutive slots in which every node reported
// execution_payload_available: the proof that a devnet is in Gloas and
// every node imports the builders' envelopes.
type PayloadRun struct {
	First, Last uint64
	Nodes       []string
}

// availability holds which slots each node reported its payload available.
type availability struct {
	mu    sync.Mutex
	nodes []string
	seen  map[string]map[uint64]bool
}

func newAvailability(nodes []string) *availability {
	a := &availability{nodes: slices.Clone(nodes), seen: make(map[string]map[uint64]bool, len(nodes))}
	for _, n := range nodes {
		a.seen[n] = map[uint64]bool{}
	}
	return a
}

func (a *availability) add(node string, slot uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.seen[node][slot] = true
}

// run returns the earliest run of n consecutive slots from slot from on that
// every node reported, if there is one.
func (a *availability) run(n int, from uint64) (PayloadRun, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.nodes) == 0 || n <= 0 {
		return PayloadRun{}, false
	}
	var all []uint64
	for slot := range a.seen[a.nodes[0]] {
		if slot >= from && a.everyNode(slot) {
			all = append(all, slot)
		}
	}
	slices.Sort(all)
	for i := range all {
		j := i
		for j+1 < len(all) && all[j+1] == all[j]+1 && j+1-i < n {
			j++
		}
		if j-i+1 == n {
			return PayloadRun{First: all[i], Last: all[j], Nodes: slices.Clone(a.nodes)}, true
		}
	}
	return PayloadRun{}, false
}

func (a *availability) everyNode(slot uint64) bool {
	for _, n := range a.nodes {
		if !a.seen[n][slot] {
			return false
		}
	}
	return true
}

// lagging names the nodes without a report of the newest slot any node
// reported, for progress and for the error on timeout.
func (a *availability) lagging() (newest uint64, nodes []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, s := range a.seen {
		for slot := range s {
			newest = max(newest, slot)
		}
	}
	for _, n := range a.nodes {
		if !a.seen[n][newest] {
			nodes = append(nodes, n)
		}
	}
	return newest, nodes
}

// availabilityHandler feeds one node's stream into the record.
type availabilityHandler struct {
	node string
	a    *availability
	log  io.Writer
	up   bool
}

func (h *availabilityHandler) Event(e beacon.SlotEvent) {
	if e.Topic == metrics.TopicPayloadAvailable {
		h.a.add(h.node, e.Slot)
	}
}

func (h *availabilityHandler) BadEvent(topic string, _ time.Time, err error) {
	fmt.Fprintf(h.log, "%s: undecodable %s event: %v\n", h.node, topic, err)
}

func (h *availabilityHandler) State(s beacon.StreamState) {
	if s.Up != h.up && s.Err != nil && !errors.Is(s.Err, context.Canceled) {
		fmt.Fprintf(h.log, "%s: event stream down: %v\n", h.node, s.Err)
	}
	h.up = s.Up
}

// WaitPayloads holds every CL's /eth/v1/events (execution_payload_available)
// until n consecutive slots from slot from on were reported by every node,
// and returns that run. It fails when ctx ends first, naming the newest slot
// and the nodes that had not reported it. Progress goes to log once a slot.
func WaitPayloads(ctx context.Context, e *Endpoints, n int, from uint64, log io.Writer) (PayloadRun, error) {
	if n <= 0 {
		return PayloadRun{}, fmt.Errorf("wait for payloads: %d slots: want at least 1", n)
	}
	if len(e.Nodes) == 0 {
		return PayloadRun{}, fmt.Errorf("wait for payloads: enclave %q has no nodes", e.Enclave)
	}
	names := make([]string, len(e.Nodes))
	for i, node := range e.Nodes {
		names[i] = node.CLService
	}
	a := newAvailability(names)
	streams := make([]*beacon.Stream, len(e.Nodes))
	for i, node := range e.Nodes {
		s, err := beacon.NewStream(node.BeaconURL, []string{metrics.TopicPayloadAvailable})
		if err != nil {
			return PayloadRun{}, fmt.Errorf("wait for payloads: %s: %w", node.CLService, err)
		}
		streams[i] = s
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	g, gctx := errgroup.WithContext(runCtx)
	for i, s := range streams {
		h := &availabilityHandler{node: names[i], a: a, log: log}
		g.Go(func() error { _ = s.Run(gctx, h); return nil })
	}
	defer func() { stop(); _ = g.Wait() }()

	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var lastNewest uint64
	for {
		if r, ok := a.run(n, from); ok {
			fmt.Fprintf(log, "execution_payload_available on all %d nodes in slots %d-%d\n", len(names), r.First, r.Last)
			return r, nil
		}
		select {
		case <-ctx.Done():
			newest, lag := a.lagging()
			if newest == 0 {
				return PayloadRun{}, fmt.Errorf("wait for payloads: no node reported execution_payload_available (%w)", ctx.Err())
			}
			return PayloadRun{}, fmt.Errorf("wait for payloads: no %d consecutive slots from slot %d on every node; newest slot %d, not reported by %s (%w)",
				n, from, newest, strings.Join(lag, ", "), ctx.Err())
		case <-tick.C:
			if newest, lag := a.lagging(); newest != lastNewest {
				lastNewest = newest
				fmt.Fprintf(log, "slot %d: execution_payload_available on %d of %d nodes\n", newest, len(names)-len(lag), len(names))
			}
		}
	}
}
