package beacon_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segdiff/segdiff/internal/beacon"
	"github.com/segdiff/segdiff/internal/beacon/beacontest"
	"github.com/segdiff/segdiff/metrics"
)

// collector records what a stream hands its handler.
type collector struct {
	mu     sync.Mutex
	events []beacon.SlotEvent
	bad    []string
	states []beacon.StreamState
	seen   chan struct{} // receives once per event or state
}

func newCollector() *collector { return &collector{seen: make(chan struct{}, 1024)} }

func (c *collector) Event(e beacon.SlotEvent) {
	c.mu.Lock()
	c.events = append(c.events, e)
	c.mu.Unlock()
	c.seen <- struct{}{}
}

func (c *collector) BadEvent(topic string, _ time.Time, err error) {
	c.mu.Lock()
	c.bad = append(c.bad, topic+": "+err.Error())
	c.mu.Unlock()
	c.seen <- struct{}{}
}

func (c *collector) State(s beacon.StreamState) {
	c.mu.Lock()
	c.states = append(c.states, s)
	c.mu.Unlock()
	c.seen <- struct{}{}
}

// waitFor runs the stream until cond holds for what was collected, or 10 s.
func (c *collector) waitFor(t *testing.T, s *beacon.Stream, cond func(c *collector) bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = s.Run(ctx, c); close(done) }()
	defer func() { cancel(); <-done }()
	deadline := time.After(10 * time.Second)
	for {
		c.mu.Lock()
		ok := cond(c)
		c.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-c.seen:
		case <-deadline:
			t.Fatalf("timed out: events %+v, states %+v, bad %v", c.events, c.states, c.bad)
		}
	}
}

func schedule(n int, every time.Duration) []beacontest.Event {
	var out []beacontest.Event
	for i := range n {
		out = append(out, beacontest.Event{Topic: beacon.StreamTopics[i%len(beacon.StreamTopics)], Slot: uint64(i / len(beacon.StreamTopics)), At: time.Duration(i+1) * every})
	}
	return out
}

func newStream(t *testing.T, url string) *beacon.Stream {
	t.Helper()
	s, err := beacon.NewStream(url, nil, beacon.WithStreamBackoff(20*time.Millisecond, 40*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestStreamReceiptBias measures what taking a time where the suite
// receives an event adds on loopback: the fake node notes when it began
// writing each event, the stream when its decoder returned it; the difference is
// the delivery's bias (scheduling, HTTP, decoding). Its median must stay
// within beacon.ReceiptBiasMedian, the figure every verdict from the
// standard source states.
func TestStreamReceiptBias(t *testing.T) {
	chain := beacontest.NewChain(time.Now())
	events := &beacontest.Stream{Clock: &beacontest.Clock{Lead: 100 * time.Millisecond}, Events: schedule(60, 10*time.Millisecond)}
	srv := beacontest.NewNodeServer(t, chain, events)
	c := newCollector()
	c.waitFor(t, newStream(t, srv.URL), func(c *collector) bool { return len(c.events) == 60 })
	sent := events.SentEvents()
	if len(sent) != 60 {
		t.Fatalf("fake sent %d events, want 60", len(sent))
	}
	var bias []time.Duration
	for i, e := range c.events {
		if e.Topic != sent[i].Topic || e.Slot != sent[i].Slot {
			t.Fatalf("event %d: got %s slot %d, sent %s slot %d", i, e.Topic, e.Slot, sent[i].Topic, sent[i].Slot)
		}
		bias = append(bias, e.At.Sub(sent[i].Emitted))
	}
	slices.Sort(bias)
	median, p99, worst := bias[len(bias)/2], bias[len(bias)*99/100], bias[len(bias)-1]
	t.Logf("receipt bias over %d events on loopback: median %v, p99 %v, max %v (stated: median %v)", len(bias), median, p99, worst, beacon.ReceiptBiasMedian)
	if median > beacon.ReceiptBiasMedian {
		t.Errorf("median receipt bias %v exceeds the stated %v", median, beacon.ReceiptBiasMedian)
	}
	if bias[0] < 0 {
		t.Errorf("an event received %v before it was written: clocks crossed", bias[0])
	}
}

// A node that drops the stream once: the stream reports it down with the
// cause and up again, and delivers the events after the reconnect; those
// the node emitted while it was down are lost (the node does not replay).
func TestStreamReconnectsAfterDrop(t *testing.T) {
	chain := beacontest.NewChain(time.Now())
	var sched []beacontest.Event
	for i := range 10 {
		sched = append(sched, beacontest.Event{Topic: metrics.TopicPayloadAvailable, Slot: uint64(i), At: time.Duration(i+1) * 50 * time.Millisecond})
	}
	// Dropped at 225 ms, back after the 20 ms backoff: slot 4 (250 ms) may
	// or may not arrive, slot 5 (300 ms) on must.
	events := &beacontest.Stream{Clock: &beacontest.Clock{Lead: 50 * time.Millisecond}, Events: sched, DropAt: 225 * time.Millisecond}
	srv := beacontest.NewNodeServer(t, chain, events)
	c := newCollector()
	c.waitFor(t, newStream(t, srv.URL), func(c *collector) bool {
		return len(c.events) > 0 && c.events[len(c.events)-1].Slot == 9
	})
	var slots []uint64
	for _, e := range c.events {
		slots = append(slots, e.Slot)
	}
	for _, want := range []uint64{0, 1, 2, 3, 5, 6, 7, 8, 9} {
		if !slices.Contains(slots, want) {
			t.Errorf("slot %d missing from %v", want, slots)
		}
	}
	var ups, downs int
	for _, s := range c.states {
		if s.Up {
			ups++
		} else if s.Err != nil && strings.Contains(s.Err.Error(), "the node closed the event stream") {
			downs++
		}
	}
	if ups != 2 || downs != 1 {
		t.Errorf("states %+v: want up, down (closed by the node), up", c.states)
	}
}

func TestStreamStates(t *testing.T) {
	tests := []struct {
		name    string
		handler http.Handler
		check   func(c *collector) bool
		want    string
	}{
		{name: "a node without an event stream", handler: beacontest.Node(beacontest.NewChain(time.Now()), nil),
			check: func(c *collector) bool { return len(c.states) > 0 }, want: "event stream: http status 404"},
		{name: "an undecodable event", handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprint(w, "event: execution_payload_available\ndata: {\"slot\":\"x\"}\n\n")
			w.(http.Flusher).Flush()
			time.Sleep(time.Second)
		}), check: func(c *collector) bool { return len(c.bad) > 0 }, want: "execution_payload_available: decode execution_payload_available event"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			t.Cleanup(srv.Close)
			c := newCollector()
			c.waitFor(t, newStream(t, srv.URL), tt.check)
			got := fmt.Sprint(c.bad)
			if len(c.states) > 0 && c.states[0].Err != nil {
				got = c.states[0].Err.Error()
			}
			if !strings.Contains(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestNewStreamRefusesABadAddress(t *testing.T) {
	for _, addr := range []string{"", "localhost:3500", "ftp://x", "http://"} {
		if _, err := beacon.NewStream(addr, nil); err == nil || !strings.Contains(err.Error(), "not an absolute http(s) URL") {
			t.Errorf("NewStream(%q): %v", addr, err)
		}
	}
	s, err := beacon.NewStream("http://127.0.0.1:3500/", []string{"block", "execution_payload_available"})
	if err != nil || s.URL() != "http://127.0.0.1:3500/eth/v1/events?topics=block&topics=execution_payload_available" {
		t.Errorf("URL %q, %v", s.URL(), err)
	}
}

func TestReadPayloadSize(t *testing.T) {
	chain := beacontest.NewChain(time.Now())
	env := beacontest.Envelope(5, 1<<20)
	chain.PutEnvelope(5, env)
	srv := beacontest.NewServer(t, chain)
	ctx := context.Background()
	c, err := beacon.New(ctx, beacon.WithAddress(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.PayloadSize(ctx, 5)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := env.MarshalSSZ()
	if got.Raw != len(raw) || got.Raw < 1<<20 || got.Compressed <= 0 || got.Compressed >= got.Raw {
		t.Errorf("size %+v, want raw %d and a smaller compressed size", got, len(raw))
	}
	if _, err := c.PayloadSize(ctx, 6); err == nil || !strings.Contains(err.Error(), "read execution payload envelope of slot 6") {
		t.Errorf("slot without an envelope: %v", err)
	}
}
