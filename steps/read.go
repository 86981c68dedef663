package steps

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/segdiff/segdiff/assertions"
	"github.com/segdiff/segdiff/devnet"
	"github.com/segdiff/segdiff/metrics"
)

// Reader reads every node's metrics-contract series at one moment.
// Implementations must be safe for concurrent use.
type Reader interface {
	// Read returns one snapshot per node id. A node it could not read is an
	// error naming the node.
	Read(ctx context.Context, d devnet.Devnet, nodes []devnet.Node) (map[string]*metrics.Snapshot, error)
}

// HTTPReader scrapes each node's MetricsURL directly, a few at a time.
type HTTPReader struct {
	// Client defaults to a client with a 10 s timeout.
	Client *http.Client
	// Parallel caps concurrent scrapes (default 16).
	Parallel int
}

// Read implements Reader.
func (r HTTPReader) Read(ctx context.Context, _ devnet.Devnet, nodes []devnet.Node) (map[string]*metrics.Snapshot, error) {
	client, parallel := r.Client, r.Parallel
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	if parallel <= 0 {
		parallel = 16
	}
	var (
		mu   sync.Mutex
		out  = make(map[string]*metrics.Snapshot, len(nodes))
		errs []error
		wg   sync.WaitGroup
		sem  = make(chan struct{}, parallel)
	)
	for _, n := range nodes {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			snap, err := scrapeOne(ctx, client, n)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			out[n.ID] = snap
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		return nil, fmt.Errorf("scrape %d of %d nodes failed, first: %w", len(errs), len(nodes), errs[0])
	}
	return out, nil
}

func scrapeOne(ctx context.Context, client *http.Client, n devnet.Node) (*metrics.Snapshot, error) {
	if n.MetricsURL == "" {
		return nil, fmt.Errorf("scrape node %s: no metrics URL", n.ID)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, n.MetricsURL, nil)
	if err != nil {
		return nil, fmt.Errorf("scrape node %s: %w", n.ID, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape node %s: %w", n.ID, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scrape node %s: GET %s: %s", n.ID, n.MetricsURL, resp.Status)
	}
	snap, err := metrics.Parse(resp.Body, n.ID+" ("+n.MetricsURL+")")
	if err != nil {
		return nil, fmt.Errorf("scrape node %s: %w", n.ID, err)
	}
	return snap, nil
}

// toNetwork joins the devnet's node list with the snapshots read from it.
// A node without a snapshot keeps no series, so every check that needs it
// fails naming it.
func toNetwork(nodes []devnet.Node, snaps map[string]*metrics.Snapshot) assertions.Network {
	net := assertions.Network{Nodes: make([]assertions.Node, 0, len(nodes))}
	for _, n := range nodes {
		an := assertions.Node{ID: n.ID, Link: string(n.LinkClass), Builder: n.HasRole(devnet.RoleBuilder), Slots: map[assertions.Series]map[uint64]float64{}}
		if snap := snaps[n.ID]; snap != nil {
			for num, sl := range snap.Slots {
				addSlot(an.Slots, num, sl)
			}
		}
		net.Nodes = append(net.Nodes, an)
	}
	return net
}

func addSlot(dst map[assertions.Series]map[uint64]float64, num uint64, sl *metrics.Slot) {
	put := func(s assertions.Series, v float64) {
		if dst[s] == nil {
			dst[s] = map[uint64]float64{}
		}
		dst[s][num] = v
	}
	unix := func(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
	for _, f := range []struct {
		name   string
		series []assertions.Series
		values []float64
	}{
		{metrics.NameRevealTimestamp, []assertions.Series{assertions.SeriesReveal}, []float64{unix(sl.Reveal)}},
		{metrics.NamePayloadSize, []assertions.Series{assertions.SeriesPayloadRaw, assertions.SeriesPayloadSize}, []float64{float64(sl.RawSize), float64(sl.CompressedSize)}},
		{metrics.NamePayloadSegments, []assertions.Series{assertions.SeriesSegments}, []float64{float64(sl.SegmentCount)}},
		{metrics.NameBlockArrivalTimestamp, []assertions.Series{assertions.SeriesBlockArrival}, []float64{unix(sl.BlockArrival)}},
		{metrics.NameBlockInstalledTimestamp, []assertions.Series{assertions.SeriesBlockInstalled}, []float64{unix(sl.BlockInstalled)}},
		{metrics.NameFirstArrivalTimestamp, []assertions.Series{assertions.SeriesFirstArrival}, []float64{unix(sl.FirstArrival)}},
		{metrics.NameCompletedTimestamp, []assertions.Series{assertions.SeriesCompleted}, []float64{unix(sl.Completed)}},
		{metrics.NameReceivedBytes, []assertions.Series{assertions.SeriesDataBytes, assertions.SeriesControlBytes}, []float64{float64(sl.DataBytes), float64(sl.ControlBytes)}},
		{metrics.NameSegmentsReceived, []assertions.Series{assertions.SeriesSegmentsRecv}, []float64{float64(sl.Segments)}},
		{metrics.NameDuplicateSegments, []assertions.Series{assertions.SeriesDuplicateRecv}, []float64{float64(sl.Duplicates)}},
	} {
		if !sl.Has(f.name) {
			continue
		}
		for i, s := range f.series {
			put(s, f.values[i])
		}
	}
}

// modeOf returns the diffusion mode the first node reporting
// payload_diffusion_info names, or fallback when none does.
func modeOf(nodes []devnet.Node, snaps map[string]*metrics.Snapshot, fallback string) string {
	for _, n := range nodes {
		if s := snaps[n.ID]; s != nil && s.Info.Present && s.Info.Mode != "" {
			return s.Info.Mode
		}
	}
	return fallback
}
