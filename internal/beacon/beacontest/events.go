package beacontest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	apiv1 "github.com/attestantio/go-eth2-client/api/v1"
	"github.com/attestantio/go-eth2-client/spec/bellatrix"
	"github.com/attestantio/go-eth2-client/spec/capella"
	"github.com/attestantio/go-eth2-client/spec/gloas"
	"github.com/attestantio/go-eth2-client/spec/phase0"
	"github.com/holiman/uint256"

	"github.com/segdiff/segdiff/metrics"
)

// Clock is a fake devnet's genesis, fixed the first time it is read (plus
// Lead): a devnet that is already running when the suite attaches, whose
// slots come after the suite has read its genesis and subscribed, however
// long the suite took to build. It is safe for concurrent use.
type Clock struct {
	// Lead is how long after the first read genesis is.
	Lead    time.Duration
	once    sync.Once
	genesis time.Time
}

// Genesis returns the genesis time, fixing it on the first call.
func (c *Clock) Genesis() time.Time {
	c.once.Do(func() { c.genesis = time.Now().Add(c.Lead) })
	return c.genesis
}

// Event is one event a fake node emits: Topic for Slot, At after genesis.
type Event struct {
	Topic string
	Slot  uint64
	At    time.Duration
}

// Stream is one fake node's /eth/v1/events: its events, emitted on a
// Clock's schedule to every connection open at their time (a connection
// misses what was emitted before it opened, as on a real node).
type Stream struct {
	Clock  *Clock
	Events []Event
	// DropAt closes the first connection open at this time after genesis
	// (0: never): the node drops the stream once.
	DropAt time.Duration

	mu      sync.Mutex
	dropped bool
	sent    []Sent
}

// Sent is one event as the fake wrote and flushed it.
type Sent struct {
	Event
	// Emitted is when the fake began writing the event: the node's moment,
	// against which a receiver's receipt time measures the delivery's bias
	// (writing, flushing, the connection and the decoder).
	Emitted time.Time
}

// SentEvents returns the events written so far, in order.
func (s *Stream) SentEvents() []Sent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.sent)
}

// ServeHTTP serves the stream until its last event or the client leaves.
func (s *Stream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "no flusher", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	flusher.Flush()
	genesis := s.Clock.Genesis()
	events := slices.Clone(s.Events)
	slices.SortStableFunc(events, func(a, b Event) int { return cmp.Compare(a.At, b.At) })
	opened := time.Since(genesis)
	drop := s.DropAt > 0 && s.DropAt > opened
	for _, e := range events {
		if e.At < opened {
			continue // emitted before this connection
		}
		if drop && e.At >= s.DropAt && s.dropOnce() {
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-time.After(time.Until(genesis.Add(e.At))):
		}
		data, err := eventData(e)
		if err != nil {
			panic(fmt.Sprintf("beacontest: %v", err))
		}
		s.mu.Lock()
		s.sent = append(s.sent, Sent{Event: e, Emitted: time.Now()})
		s.mu.Unlock()
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", e.Topic, data); err != nil {
			return
		}
		flusher.Flush()
	}
	if drop && s.dropOnce() {
		return
	}
	<-r.Context().Done() // a quiet node holds the stream open
}

// dropOnce reports whether this is the stream's one drop, waiting for its
// time.
func (s *Stream) dropOnce() bool {
	s.mu.Lock()
	if s.dropped {
		s.mu.Unlock()
		return false
	}
	s.dropped = true
	s.mu.Unlock()
	time.Sleep(time.Until(s.Clock.Genesis().Add(s.DropAt)))
	return true
}

// eventData is e's data as a node sends it, marshalled by go-eth2-client's
// type for the topic.
func eventData(e Event) ([]byte, error) {
	slot := phase0.Slot(e.Slot)
	switch e.Topic {
	case metrics.TopicPayloadGossip:
		return json.Marshal(&apiv1.ExecutionPayloadGossipEvent{Slot: slot, BlockRoot: Root(e.Slot)})
	case metrics.TopicPayloadAvailable:
		return json.Marshal(&apiv1.ExecutionPayloadAvailableEvent{Slot: slot, BlockRoot: Root(e.Slot)})
	case metrics.TopicBlockGossip:
		return json.Marshal(&apiv1.BlockGossipEvent{Slot: slot, Block: Root(e.Slot)})
	case metrics.TopicBlock:
		return json.Marshal(&apiv1.BlockEvent{Slot: slot, Block: Root(e.Slot)})
	}
	return nil, fmt.Errorf("no fake data for topic %q", e.Topic)
}

// Node serves one fake node's beacon API: chain's endpoints and, when
// events is not nil, its /eth/v1/events (404 without one, as on a node
// that has no event stream).
func Node(chain *Chain, events *Stream) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/eth/v1/events" {
			if events == nil {
				writeError(w, http.StatusNotFound, "unknown endpoint /eth/v1/events")
				return
			}
			events.ServeHTTP(w, r)
			return
		}
		chain.ServeHTTP(w, r)
	})
}

// NewNodeServer serves Node(chain, events) until t's cleanup.
func NewNodeServer(t testing.TB, chain *Chain, events *Stream) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(Node(chain, events))
	t.Cleanup(srv.Close)
	return srv
}

// Envelope builds slot's signed execution payload envelope carrying one
// transaction of txBytes bytes (a repeating pattern, so that snappy
// compresses it as it compresses real calldata, somewhat), with every
// field the JSON decoder requires.
func Envelope(slot uint64, txBytes int) *gloas.SignedExecutionPayloadEnvelope {
	tx := make([]byte, txBytes)
	for i := range tx {
		tx[i] = byte(i*7 + i/61)
	}
	return &gloas.SignedExecutionPayloadEnvelope{
		Message: &gloas.ExecutionPayloadEnvelope{
			Payload: &gloas.ExecutionPayload{
				BlockNumber: slot, GasLimit: 60_000_000, Timestamp: 1_800_000_000 + slot*12, SlotNumber: slot,
				ExtraData: []byte{}, BaseFeePerGas: uint256.NewInt(7),
				Transactions:    []bellatrix.Transaction{tx},
				Withdrawals:     []*capella.Withdrawal{},
				BlockAccessList: gloas.BlockAccessList{},
			},
			ExecutionRequests: &gloas.ExecutionRequests{},
			BeaconBlockRoot:   Root(slot),
		},
	}
}

// PutEnvelope stores slot's envelope, served by
// /eth/v1/beacon/execution_payload_envelopes/{slot}. The response is
// encoded here, once: a megabyte of hex per request would cost the live
// fakes' timers their accuracy.
func (c *Chain) PutEnvelope(slot uint64, e *gloas.SignedExecutionPayloadEnvelope) {
	body, err := json.Marshal(map[string]any{"data": e, "version": "gloas", "execution_optimistic": false, "finalized": false})
	if err != nil {
		panic(fmt.Sprintf("beacontest: envelope of slot %d: %v", slot, err))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.envelopes == nil {
		c.envelopes = map[uint64][]byte{}
	}
	c.envelopes[slot] = body
}

const envelopesPath = "/eth/v1/beacon/execution_payload_envelopes/"

// serveEnvelope answers for the envelope of block id, which this fake
// knows by slot only (any other id, like a slot without one, is 404).
func (c *Chain) serveEnvelope(w http.ResponseWriter, id string) {
	slot, err := strconv.ParseUint(id, 10, 64)
	body := c.envelopes[slot]
	if err != nil || body == nil {
		writeError(w, http.StatusNotFound, "NOT_FOUND: no execution payload envelope for block "+id)
		return
	}
	w.Header().Set("Eth-Consensus-Version", "gloas")
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}
