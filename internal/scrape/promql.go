package scrape

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/segdiff/segdiff/internal/devnet"
	"github.com/segdiff/segdiff/metrics"
)

// PromQL reads the contract series from a Prometheus that scrapes every
// node, one instant query per series, and maps results to nodes by the
// node label (segdiff_node). It is safe for concurrent use.
type PromQL struct {
	p   *parameters
	url string
	api v1.API
}

var _ Source = (*PromQL)(nil)

// NewPromQL returns a PromQL source for the Prometheus at url (its base URL,
// e.g. http://127.0.0.1:9090). Options: WithHTTPClient, WithTimeout,
// WithRetries, WithBackoff, WithNow, WithNodeLabel.
func NewPromQL(url string, opts ...Option) (*PromQL, error) {
	if url == "" {
		return nil, errors.New("new promql scraper: no prometheus url specified")
	}
	p, err := parseAndCheckParameters(opts)
	if err != nil {
		return nil, fmt.Errorf("new promql scraper: %w", err)
	}
	c, err := api.NewClient(api.Config{Address: url, Client: p.client})
	if err != nil {
		return nil, fmt.Errorf("new promql scraper: %w", err)
	}
	return &PromQL{p: p, url: url, api: v1.NewAPI(c)}, nil
}

// queries lists the series PromQL asks for: every contract name, the
// histogram as its _bucket, _sum and _count series.
func queries() []string {
	var qs []string
	for _, d := range metrics.Definitions {
		if d.Type == metrics.TypeHistogram {
			qs = append(qs, d.Name+"_bucket", d.Name+"_sum", d.Name+"_count")
			continue
		}
		qs = append(qs, d.Name)
	}
	return qs
}

// Snapshots queries every contract series at WithNow's time and builds one
// Snapshot per node (Source = node ID). A failed query fails every node; a
// series without the node label is an error naming it; a node with no series
// at all is a *NodeError wrapping ErrNoSeries. Series of nodes not asked for
// are ignored.
func (q *PromQL) Snapshots(ctx context.Context, nodes []devnet.Node) (map[string]*metrics.Snapshot, error) {
	if err := checkNodes(nodes); err != nil {
		return nil, fmt.Errorf("query metrics: %w", err)
	}
	want := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		want[n.ID] = true
	}
	at := q.p.now()
	samples := make(map[string][]metrics.Sample, len(nodes))
	for _, query := range queries() {
		vec, err := q.query(ctx, query, at)
		if err != nil {
			return nil, err
		}
		for _, s := range vec {
			node, ok := s.Metric[model.LabelName(q.p.nodeLabel)]
			if !ok || node == "" {
				return nil, fmt.Errorf("query metrics from %s: %s: %w %q", q.url, s.Metric, ErrNoNodeLabel, q.p.nodeLabel)
			}
			if !want[string(node)] {
				continue
			}
			labels := make(map[string]string, len(s.Metric))
			for k, v := range s.Metric {
				if k != model.MetricNameLabel {
					labels[string(k)] = string(v)
				}
			}
			samples[string(node)] = append(samples[string(node)], metrics.Sample{
				Name: string(s.Metric[model.MetricNameLabel]), Labels: labels, Value: float64(s.Value),
			})
		}
	}
	out := make(map[string]*metrics.Snapshot, len(nodes))
	var errs []*NodeError
	for _, n := range nodes {
		ss, ok := samples[n.ID]
		if !ok {
			errs = append(errs, &NodeError{Node: n.ID, URL: q.url, Err: fmt.Errorf("%w (%s=%q)", ErrNoSeries, q.p.nodeLabel, n.ID)})
			continue
		}
		snap, err := metrics.FromSamples(n.ID, ss)
		if err != nil {
			errs = append(errs, &NodeError{Node: n.ID, URL: q.url, Err: err})
			continue
		}
		out[n.ID] = snap
	}
	return out, joinNodeErrors(errs, len(nodes))
}

// query runs one instant query with retries; the name query is the series
// name, whose __name__ label PromQL keeps in the result.
func (q *PromQL) query(ctx context.Context, query string, at time.Time) (model.Vector, error) {
	var vec model.Vector
	err := q.p.retry(ctx, func(ctx context.Context) error {
		v, _, _, err := q.api.Query(ctx, query, at)
		if err != nil {
			return err
		}
		got, ok := v.(model.Vector)
		if !ok {
			return &resultTypeError{got: v.Type()}
		}
		vec = got
		return nil
	}, transientAPI)
	if err != nil {
		return nil, fmt.Errorf("query metrics from %s: %s: %w", q.url, query, err)
	}
	// PromQL drops __name__ only for expressions; a plain selector keeps it,
	// but set it anyway so a proxy that strips it cannot confuse the model.
	for _, s := range vec {
		if _, ok := s.Metric[model.MetricNameLabel]; !ok {
			m := maps.Clone(s.Metric)
			m[model.MetricNameLabel] = model.LabelValue(query)
			s.Metric = m
		}
	}
	return vec, nil
}

type resultTypeError struct{ got model.ValueType }

func (e *resultTypeError) Error() string {
	return fmt.Sprintf("result type %s, want vector", e.got)
}

// transientAPI says whether a query error is worth retrying: transport
// errors and the API's server_error and timeout types.
func transientAPI(err error) bool {
	var rt *resultTypeError
	if errors.As(err, &rt) {
		return false
	}
	var ae *v1.Error
	if errors.As(err, &ae) {
		return slices.Contains([]v1.ErrorType{v1.ErrServer, v1.ErrTimeout}, ae.Type) ||
			strings.Contains(ae.Msg, "429")
	}
	return true
}
