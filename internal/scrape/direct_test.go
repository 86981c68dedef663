package scrape_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/segdiff/segdiff/assertions"
	"github.com/segdiff/segdiff/internal/devnet"
	"github.com/segdiff/segdiff/internal/scrape"
	"github.com/segdiff/segdiff/metrics"
)

var epoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// exposition is a small valid node exposition: slot 3 completed at epoch+3.5 s.
const exposition = `# TYPE payload_diffusion_info gauge
payload_diffusion_info{client="embedded",format="segdiff/1",mode="segmented"} 1
# TYPE payload_diffusion_completed_timestamp_seconds gauge
payload_diffusion_completed_timestamp_seconds{slot="3"} 9.466848035e+08
`

// fast keeps retries quick in tests.
var fast = []scrape.Option{scrape.WithBackoff(time.Millisecond, time.Millisecond), scrape.WithTimeout(2 * time.Second)}

func newDirect(t *testing.T, opts ...scrape.Option) *scrape.Direct {
	t.Helper()
	d, err := scrape.NewDirect(append(fast[:len(fast):len(fast)], opts...)...)
	require.NoError(t, err)
	return d
}

func node(id, url string) devnet.Node {
	return devnet.Node{ID: id, Roles: []devnet.Role{devnet.RoleNode}, MetricsURL: url}
}

func serve(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func TestDirectGoodScrape(t *testing.T) {
	var accept atomic.Value
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		accept.Store(r.Header.Get("Accept"))
		fmt.Fprint(w, exposition)
	})
	snaps, err := newDirect(t).Snapshots(context.Background(), []devnet.Node{node("n1", srv.URL+"/metrics")})
	require.NoError(t, err)
	require.Len(t, snaps, 1)
	s := snaps["n1"]
	require.NotNil(t, s)
	assert.Equal(t, "n1", s.Source)
	assert.Equal(t, "embedded", s.Info.Client)
	assert.Equal(t, epoch.Add(3500*time.Millisecond), s.Slot(3).Completed)
	assert.Contains(t, accept.Load(), "text/plain;version=0.0.4")
}

// TestDirectRecorderRoundTrip serves a Recorder's registry with promhttp,
// as an embedded node does, and reads it back.
func TestDirectRecorderRoundTrip(t *testing.T) {
	reg := prometheus.NewRegistry()
	r, err := metrics.NewRecorder(reg, metrics.WithInfo(metrics.ModeWhole, "segdiff/1", "embedded"))
	require.NoError(t, err)
	r.Revealed(9, epoch.Add(6*time.Second), 1000, 600, 1)
	r.FirstArrival(9, epoch.Add(6100*time.Millisecond))
	r.Completed(9, epoch.Add(6200*time.Millisecond))
	r.AddReceivedBytes(9, metrics.KindData, 1200)
	r.AddReceivedBytes(9, metrics.KindControl, 40)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()

	snap, err := newDirect(t).Snapshot(context.Background(), node("builder", srv.URL))
	require.NoError(t, err)
	s := snap.Slot(9)
	require.NoError(t, snap.Require(9, metrics.NameRevealTimestamp, metrics.NameCompletedTimestamp, metrics.NameReceivedBytes))
	c, ok := s.CompletionFrom(s.Reveal)
	require.True(t, ok)
	assert.Equal(t, 200*time.Millisecond, c)
	// One node both reveals and receives here: it stands for the builder
	// (the compressed size) and a receiver (the bytes).
	net := assertions.Network{Nodes: []assertions.Node{{ID: "builder", Builder: true, Slots: snap.Slots}, {ID: "receiver", Slots: snap.Slots}}}
	copies, err := assertions.Copies(net, []uint64{9}, assertions.CopiesOverSlot)
	require.NoError(t, err)
	require.Len(t, copies, 1)
	assert.InDelta(t, 1240.0/600, copies[0].Value, 1e-12)
}

func TestDirectRetriesThenSucceeds(t *testing.T) {
	var calls atomic.Int32
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			http.Error(w, "warming up", http.StatusInternalServerError)
			return
		}
		fmt.Fprint(w, exposition)
	})
	snaps, err := newDirect(t).Snapshots(context.Background(), []devnet.Node{node("n1", srv.URL)})
	require.NoError(t, err)
	assert.NotNil(t, snaps["n1"])
	assert.EqualValues(t, 2, calls.Load())
}

func TestDirectStatusErrors(t *testing.T) {
	tests := []struct {
		name      string
		code      int
		retries   int
		wantCalls int32
		want      string
	}{
		{name: "5xx retried until spent", code: 503, retries: 2, wantCalls: 3, want: "give up after 3 attempts: http status 503: down"},
		{name: "429 retried", code: 429, retries: 1, wantCalls: 2, want: "give up after 2 attempts: http status 429"},
		{name: "404 not retried", code: 404, retries: 2, wantCalls: 1, want: "http status 404: down"},
		{name: "no retries", code: 500, retries: 0, wantCalls: 1, want: "http status 500"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
				calls.Add(1)
				http.Error(w, "down", tt.code)
			})
			_, err := newDirect(t, scrape.WithRetries(tt.retries)).Snapshot(context.Background(), node("n7", srv.URL))
			require.Error(t, err)
			assert.Contains(t, err.Error(), "scrape node n7 ("+srv.URL+"): "+tt.want)
			var se *scrape.StatusError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tt.code, se.Code)
			assert.Equal(t, tt.wantCalls, calls.Load())
		})
	}
}

func TestDirectTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release)
	start := time.Now()
	_, err := newDirect(t, scrape.WithTimeout(50*time.Millisecond), scrape.WithRetries(1)).
		Snapshot(context.Background(), node("slow", srv.URL))
	require.Error(t, err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "scrape node slow ("+srv.URL+")")
	assert.Contains(t, err.Error(), "give up after 2 attempts")
	assert.Less(t, time.Since(start), 2*time.Second, "timeout must end the request")
}

func TestDirectContextEndsBackoff(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", 500) })
	d := newDirect(t, scrape.WithBackoff(time.Hour, time.Hour))
	ctx, cancel := context.WithTimeout(context.Background(), time.Second) // ample for the first attempt under load
	defer cancel()
	_, err := d.Snapshot(ctx, node("n1", srv.URL))
	require.Error(t, err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	var se *scrape.StatusError
	assert.ErrorAs(t, err, &se, "the last transient error is kept")
}

func TestDirectGarbageBody(t *testing.T) {
	good := serve(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, exposition) })
	var calls atomic.Int32
	bad := serve(t, func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		fmt.Fprint(w, "<html>not metrics{</html>\n")
	})
	snaps, err := newDirect(t).Snapshots(context.Background(), []devnet.Node{node("good", good.URL), node("bad", bad.URL)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "scrape metrics: 1 of 2 nodes failed (bad)")
	assert.Contains(t, err.Error(), "scrape node bad ("+bad.URL+"): parse metrics from bad: text format parsing error")
	var ne *scrape.NodeError
	require.ErrorAs(t, err, &ne)
	assert.Equal(t, "bad", ne.Node)
	assert.Equal(t, bad.URL, ne.URL)
	assert.EqualValues(t, 1, calls.Load(), "a parse error is not retried")
	assert.Len(t, snaps, 1)
	assert.NotNil(t, snaps["good"])
}

func TestDirectContractViolation(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "# TYPE payload_diffusion_completed_timestamp_seconds gauge\npayload_diffusion_completed_timestamp_seconds{slot=\"x\"} 1\n")
	})
	_, err := newDirect(t).Snapshot(context.Background(), node("n1", srv.URL))
	assert.ErrorIs(t, err, metrics.ErrBadLabel)
}

func TestDirectBodyTooLarge(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, exposition) })
	_, err := newDirect(t, scrape.WithMaxBodyBytes(16)).Snapshot(context.Background(), node("n1", srv.URL))
	require.ErrorIs(t, err, scrape.ErrBodyTooLarge)
}

func TestDirectManyNodesBoundedConcurrency(t *testing.T) {
	var inFlight, peak atomic.Int32
	var mu sync.Mutex
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		mu.Lock()
		peak.Store(max(peak.Load(), n))
		mu.Unlock()
		time.Sleep(5 * time.Millisecond)
		if strings.HasSuffix(r.URL.Path, "/n4") || strings.HasSuffix(r.URL.Path, "/n7") {
			http.Error(w, "gone", http.StatusNotFound)
			return
		}
		fmt.Fprint(w, exposition)
	})
	var nodes []devnet.Node
	for i := range 10 {
		nodes = append(nodes, node(fmt.Sprintf("n%d", i), fmt.Sprintf("%s/n%d", srv.URL, i)))
	}
	snaps, err := newDirect(t, scrape.WithConcurrency(3)).Snapshots(context.Background(), nodes)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "2 of 10 nodes failed (n4, n7)")
	assert.Contains(t, err.Error(), "scrape node n4 ("+srv.URL+"/n4): http status 404")
	assert.Len(t, snaps, 8)
	assert.LessOrEqual(t, peak.Load(), int32(3))
	assert.Positive(t, peak.Load())
}

// TestDirectCancelledSendsNothing: a context that ended before the scrape
// fails every node with its error and sends no request.
func TestDirectCancelledSendsNothing(t *testing.T) {
	var hits atomic.Int32
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, exposition)
	})
	var nodes []devnet.Node
	for i := range 20 {
		nodes = append(nodes, node(fmt.Sprintf("n%02d", i), fmt.Sprintf("%s/n%d", srv.URL, i)))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	snaps, err := newDirect(t, scrape.WithConcurrency(4)).Snapshots(ctx, nodes)
	require.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "20 of 20 nodes failed")
	assert.Empty(t, snaps)
	assert.Zero(t, hits.Load(), "requests sent after the context ended")
}

func TestDirectBadNodes(t *testing.T) {
	tests := []struct {
		name    string
		nodes   []devnet.Node
		wantErr error
		want    string
	}{
		{name: "none", wantErr: scrape.ErrNoNodes, want: "scrape metrics: no nodes to scrape"},
		{name: "no id", nodes: []devnet.Node{node("", "http://x")}, wantErr: scrape.ErrNoNodeID, want: "node 0: node has no id"},
		{name: "duplicate", nodes: []devnet.Node{node("a", "http://x"), node("a", "http://y")}, wantErr: scrape.ErrDuplicateNode, want: "node a: duplicate node id"},
		{name: "no url", nodes: []devnet.Node{node("a", "")}, wantErr: scrape.ErrNoMetricsURL, want: "scrape node a (): node has no metrics url"},
		{name: "relative url", nodes: []devnet.Node{node("a", "localhost:8080/metrics")}, wantErr: scrape.ErrBadMetricsURL, want: "scrape node a (localhost:8080/metrics)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := newDirect(t).Snapshots(context.Background(), tt.nodes)
			require.ErrorIs(t, err, tt.wantErr)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestOptions(t *testing.T) {
	tests := []struct {
		name string
		opt  scrape.Option
		want string
	}{
		{"nil client", scrape.WithHTTPClient(nil), "nil http client"},
		{"zero timeout", scrape.WithTimeout(0), "timeout 0s: must be positive"},
		{"negative retries", scrape.WithRetries(-1), "retries -1"},
		{"backoff above max", scrape.WithBackoff(time.Second, time.Millisecond), "backoff 1s up to 1ms"},
		{"zero concurrency", scrape.WithConcurrency(0), "concurrency 0"},
		{"zero body", scrape.WithMaxBodyBytes(0), "max body bytes 0"},
		{"nil clock", scrape.WithNow(nil), "nil clock"},
		{"empty node label", scrape.WithNodeLabel(""), "empty node label"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := scrape.NewDirect(tt.opt)
			require.ErrorContains(t, err, "new direct scraper: "+tt.want)
			_, err = scrape.NewPromQL("http://prom:9090", tt.opt)
			require.ErrorContains(t, err, "new promql scraper: "+tt.want)
		})
	}
	_, err := scrape.NewPromQL("")
	require.ErrorContains(t, err, "no prometheus url specified")
}
