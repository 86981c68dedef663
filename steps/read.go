package steps

import (
	"context"
	"fmt"
	"time"

	"github.com/segdiff/segdiff/assertions"
	"github.com/segdiff/segdiff/internal/devnet"
	"github.com/segdiff/segdiff/internal/scrape"
	"github.com/segdiff/segdiff/metrics"
)

// Reader reads every node's metrics-contract series at one moment.
// Implementations must be safe for concurrent use.
type Reader interface {
	// Read returns one snapshot per node id. A node it could not read is an
	// error naming the node.
	Read(ctx context.Context, d devnet.Devnet, nodes []devnet.Node) (map[string]*metrics.Snapshot, error)
}

// Scrape modes of ScrapeReader.
const (
	ScrapeDirect = "direct" // every node's /metrics (scrape.Direct)
	ScrapePromQL = "promql" // the devnet's Prometheus (scrape.PromQL)
)

// ScrapeReader reads through package scrape: directly from each node's
// MetricsURL, or, in ScrapePromQL mode, from the devnet's Prometheus.
type ScrapeReader struct {
	// Mode is ScrapeDirect (default) or ScrapePromQL.
	Mode string
	// Options are passed to the scrape source.
	Options []scrape.Option
}

// Read implements Reader. Any node that could not be read fails the read.
func (r ScrapeReader) Read(ctx context.Context, d devnet.Devnet, nodes []devnet.Node) (map[string]*metrics.Snapshot, error) {
	var src scrape.Source
	var err error
	switch r.Mode {
	case "", ScrapeDirect:
		src, err = scrape.NewDirect(r.Options...)
	case ScrapePromQL:
		src, err = scrape.NewPromQL(d.PrometheusURL(), r.Options...)
	default:
		err = fmt.Errorf("unknown scrape mode %q (want %s or %s)", r.Mode, ScrapeDirect, ScrapePromQL)
	}
	if err != nil {
		return nil, err
	}
	return src.Snapshots(ctx, nodes)
}

// toNetwork joins the devnet's node list with the snapshots read from it.
// A node without a snapshot keeps no series, so every check that needs it
// fails naming it.
func toNetwork(nodes []devnet.Node, snaps map[string]*metrics.Snapshot) assertions.Network {
	net := assertions.Network{Nodes: make([]assertions.Node, 0, len(nodes))}
	for _, n := range nodes {
		an := assertions.Node{ID: n.ID, Link: string(n.LinkClass), Builder: n.HasRole(devnet.RoleBuilder), Slots: map[assertions.Series]map[uint64]float64{}}
		for _, r := range n.Roles {
			an.Adversary = an.Adversary || r.Adversarial()
		}
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
