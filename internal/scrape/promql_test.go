package scrape_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/segdiff/segdiff/assertions"
	"github.com/segdiff/segdiff/internal/devnet"
	"github.com/segdiff/segdiff/internal/scrape"
	"github.com/segdiff/segdiff/metrics"
)

// series is one stored series of the fake Prometheus.
type series struct {
	labels map[string]string // __name__ included
	value  float64
}

// fakePrometheus answers /api/v1/query for plain metric-name selectors from
// its series, in the Prometheus HTTP API's JSON format. fail, when set,
// decides a status code for a query (0 = answer normally).
type fakePrometheus struct {
	mu      sync.Mutex
	series  []series
	queries map[string]int
	times   []string
	fail    func(query string, n int) int
	matrix  bool
}

func (f *fakePrometheus) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/api/v1/query" {
		http.NotFound(w, r)
		return
	}
	q := r.FormValue("query")
	f.mu.Lock()
	if f.queries == nil {
		f.queries = map[string]int{}
	}
	f.queries[q]++
	n := f.queries[q]
	f.times = append(f.times, r.FormValue("time"))
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if f.fail != nil {
		if code := f.fail(q, n); code != 0 {
			w.WriteHeader(code)
			errType := "server_error"
			if code/100 == 4 {
				errType = "bad_data"
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"status": "error", "errorType": errType, "error": "injected failure"})
			return
		}
	}
	type result struct {
		Metric map[string]string `json:"metric"`
		Value  []any             `json:"value,omitempty"`
		Values [][]any           `json:"values,omitempty"`
	}
	results := []result{}
	for _, s := range f.series {
		if s.labels["__name__"] != q {
			continue
		}
		sample := []any{946684900.0, strconv.FormatFloat(s.value, 'g', -1, 64)}
		if f.matrix {
			results = append(results, result{Metric: s.labels, Values: [][]any{sample}})
		} else {
			results = append(results, result{Metric: s.labels, Value: sample})
		}
	}
	resultType := "vector"
	if f.matrix {
		resultType = "matrix"
	}
	_ = json.NewEncoder(w).Encode(map[string]any{
		"status": "success",
		"data":   map[string]any{"resultType": resultType, "result": results},
	})
}

func lbl(name, node string, kv ...string) map[string]string {
	m := map[string]string{"__name__": name, "job": "cl", "instance": node + ":8080"}
	if node != "" {
		m["segdiff_node"] = node
	}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// devnetSeries: builder cl-1 and relay cl-2 on slot 5, plus a node the suite
// does not ask about.
func devnetSeries() []series {
	var ss []series
	for _, n := range []string{"cl-1", "cl-2", "cl-other"} {
		ss = append(ss,
			series{lbl(metrics.NameInfo, n, "mode", "segmented", "format", "segdiff/1", "client", "prysm"), 1},
			series{lbl(metrics.NameCompletedTimestamp, n, "slot", "5"), 946684866.7},
			series{lbl(metrics.NameReceivedBytes, n, "slot", "5", "kind", "data"), 800000},
			series{lbl(metrics.NameReceivedBytes, n, "slot", "5", "kind", "control"), 4000},
			series{lbl(metrics.NameBlockInstallDelay+"_bucket", n, "le", "0.1"), 4},
			series{lbl(metrics.NameBlockInstallDelay+"_bucket", n, "le", "+Inf"), 5},
			series{lbl(metrics.NameBlockInstallDelay+"_sum", n), 0.9},
			series{lbl(metrics.NameBlockInstallDelay+"_count", n), 5},
			series{lbl(metrics.NameSegmentsRejectedTotal, n, "reason", "proof"), 0},
		)
	}
	ss = append(ss,
		series{lbl(metrics.NameRevealTimestamp, "cl-1", "slot", "5"), 946684866},
		series{lbl(metrics.NamePayloadSize, "cl-1", "slot", "5", "encoding", "compressed"), 746000},
		series{lbl(metrics.NamePayloadSize, "cl-1", "slot", "5", "encoding", "raw"), 1048576},
	)
	return ss
}

func newPromQL(t *testing.T, f *fakePrometheus, opts ...scrape.Option) (*scrape.PromQL, string) {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	q, err := scrape.NewPromQL(srv.URL, append(fast[:len(fast):len(fast)], opts...)...)
	require.NoError(t, err)
	return q, srv.URL
}

var cl1, cl2 = devnet.Node{ID: "cl-1"}, devnet.Node{ID: "cl-2"}

func TestPromQLBuildsSnapshots(t *testing.T) {
	f := &fakePrometheus{series: devnetSeries()}
	at := time.Date(2000, 1, 1, 0, 1, 40, 0, time.UTC)
	q, _ := newPromQL(t, f, scrape.WithNow(func() time.Time { return at }))
	snaps, err := q.Snapshots(context.Background(), []devnet.Node{cl1, cl2})
	require.NoError(t, err)
	require.Len(t, snaps, 2)

	b := snaps["cl-1"]
	assert.Equal(t, "cl-1", b.Source)
	assert.Equal(t, metrics.Info{Mode: "segmented", Format: "segdiff/1", Client: "prysm", Present: true}, b.Info)
	require.NoError(t, b.Require(5, metrics.NameRevealTimestamp, metrics.NamePayloadSize, metrics.NameCompletedTimestamp, metrics.NameReceivedBytes))
	assert.Equal(t, metrics.Histogram{Count: 5, Sum: 0.9, Buckets: []metrics.Bucket{{UpperBound: 0.1, Count: 4}}}, b.Totals.InstallDelay)

	r := snaps["cl-2"]
	assert.False(t, r.Slot(5).Has(metrics.NameRevealTimestamp))
	c, ok := r.Slot(5).CompletionFrom(b.Slot(5).Reveal)
	require.True(t, ok)
	assert.Equal(t, 700*time.Millisecond, c)
	builder := cl1
	builder.Roles = []devnet.Role{devnet.RoleBuilder}
	net, err := assertions.FromSnapshots([]devnet.Node{builder, cl2}, snaps)
	require.NoError(t, err)
	copies, err := assertions.Copies(net, []uint64{5}, assertions.CopiesOverSlot)
	require.NoError(t, err)
	require.Len(t, copies, 1)
	assert.InDelta(t, 804000.0/746000, copies[0].Value, 1e-12)

	// One query per contract series (the histogram as three), all at the given time.
	f.mu.Lock()
	defer f.mu.Unlock()
	assert.Len(t, f.queries, len(metrics.Definitions)+2)
	for qn, n := range f.queries {
		assert.Equal(t, 1, n, qn)
	}
	for _, ts := range f.times {
		assert.Equal(t, "946684900", ts)
	}
}

func TestPromQLMissingNodeLabel(t *testing.T) {
	ss := append(devnetSeries(), series{lbl(metrics.NameCompletedTimestamp, "", "slot", "6"), 946684870})
	q, url := newPromQL(t, &fakePrometheus{series: ss})
	_, err := q.Snapshots(context.Background(), []devnet.Node{cl1})
	require.ErrorIs(t, err, scrape.ErrNoNodeLabel)
	assert.Contains(t, err.Error(), "query metrics from "+url+": payload_diffusion_completed_timestamp_seconds{")
	assert.Contains(t, err.Error(), `slot="6"`)
	assert.Contains(t, err.Error(), `series has no node label "segdiff_node"`)
}

func TestPromQLNodeWithoutSeries(t *testing.T) {
	q, url := newPromQL(t, &fakePrometheus{series: devnetSeries()})
	snaps, err := q.Snapshots(context.Background(), []devnet.Node{cl1, {ID: "cl-9"}})
	require.ErrorIs(t, err, scrape.ErrNoSeries)
	assert.Contains(t, err.Error(), "1 of 2 nodes failed (cl-9)")
	assert.Contains(t, err.Error(), "scrape node cl-9 ("+url+"): no payload_diffusion_ series for node (segdiff_node=\"cl-9\")")
	assert.Len(t, snaps, 1)
}

func TestPromQLContractViolationNamesNode(t *testing.T) {
	ss := append(devnetSeries(), series{lbl(metrics.NameCompletedTimestamp, "cl-2", "slot", "5", "job", "el"), 946684867})
	q, _ := newPromQL(t, &fakePrometheus{series: ss})
	snaps, err := q.Snapshots(context.Background(), []devnet.Node{cl1, cl2})
	require.ErrorIs(t, err, metrics.ErrDuplicate)
	assert.Contains(t, err.Error(), "scrape node cl-2")
	assert.Contains(t, err.Error(), "parse metrics from cl-2")
	assert.Len(t, snaps, 1)
}

func TestPromQLRetriesServerErrors(t *testing.T) {
	f := &fakePrometheus{series: devnetSeries(), fail: func(q string, n int) int {
		if q == metrics.NameCompletedTimestamp && n == 1 {
			return http.StatusServiceUnavailable
		}
		return 0
	}}
	q, _ := newPromQL(t, f)
	snaps, err := q.Snapshots(context.Background(), []devnet.Node{cl1})
	require.NoError(t, err)
	assert.True(t, snaps["cl-1"].Slot(5).Has(metrics.NameCompletedTimestamp))
	f.mu.Lock()
	assert.Equal(t, 2, f.queries[metrics.NameCompletedTimestamp])
	f.mu.Unlock()
}

func TestPromQLBadQueryNotRetried(t *testing.T) {
	f := &fakePrometheus{series: devnetSeries(), fail: func(q string, n int) int {
		if q == metrics.NameInfo {
			return http.StatusBadRequest
		}
		return 0
	}}
	q, url := newPromQL(t, f)
	_, err := q.Snapshots(context.Background(), []devnet.Node{cl1})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "query metrics from "+url+": payload_diffusion_info: bad_data: injected failure")
	f.mu.Lock()
	assert.Equal(t, 1, f.queries[metrics.NameInfo])
	f.mu.Unlock()
}

func TestPromQLWrongResultType(t *testing.T) {
	q, _ := newPromQL(t, &fakePrometheus{series: devnetSeries(), matrix: true})
	_, err := q.Snapshots(context.Background(), []devnet.Node{cl1})
	require.ErrorContains(t, err, "result type matrix, want vector")
}

func TestPromQLCustomNodeLabel(t *testing.T) {
	ss := []series{{map[string]string{"__name__": metrics.NameCompletedTimestamp, "node": "cl-1", "slot": "1"}, 946684800.25}}
	q, _ := newPromQL(t, &fakePrometheus{series: ss}, scrape.WithNodeLabel("node"))
	snaps, err := q.Snapshots(context.Background(), []devnet.Node{cl1})
	require.NoError(t, err)
	assert.Equal(t, epoch.Add(250*time.Millisecond), snaps["cl-1"].Slot(1).Completed)
}
