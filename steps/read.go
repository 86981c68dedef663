package steps

import (
	"context"
	"fmt"

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
