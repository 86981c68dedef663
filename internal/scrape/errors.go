package scrape

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Sentinel errors; test with errors.Is.
var (
	// ErrNoNodes: Snapshots was given no nodes.
	ErrNoNodes = errors.New("no nodes to scrape")
	// ErrNoNodeID: a node without an ID.
	ErrNoNodeID = errors.New("node has no id")
	// ErrDuplicateNode: two nodes with one ID.
	ErrDuplicateNode = errors.New("duplicate node id")
	// ErrNoMetricsURL: a node without a metrics URL (Direct).
	ErrNoMetricsURL = errors.New("node has no metrics url")
	// ErrBadMetricsURL: a metrics URL that is not an absolute http(s) URL.
	ErrBadMetricsURL = errors.New("metrics url is not an absolute http(s) url")
	// ErrBodyTooLarge: a /metrics body longer than WithMaxBodyBytes.
	ErrBodyTooLarge = errors.New("metrics body too large")
	// ErrNoSeries: Prometheus has no contract series for a node (PromQL).
	ErrNoSeries = errors.New("no payload_diffusion_ series for node")
	// ErrNoNodeLabel: a PromQL result series without the node label.
	ErrNoNodeLabel = errors.New("series has no node label")
)

// NodeError is the failure to read one node; URL is the node's metrics URL
// (Direct) or the Prometheus URL (PromQL).
type NodeError struct {
	Node string
	URL  string
	Err  error
}

func (e *NodeError) Error() string {
	return fmt.Sprintf("scrape node %s (%s): %v", e.Node, e.URL, e.Err)
}

// Unwrap returns the cause.
func (e *NodeError) Unwrap() error { return e.Err }

// StatusError is a non-2xx HTTP response; Body holds its first bytes.
type StatusError struct {
	Code int
	Body string
}

func (e *StatusError) Error() string {
	if e.Body == "" {
		return fmt.Sprintf("http status %d", e.Code)
	}
	return fmt.Sprintf("http status %d: %s", e.Code, e.Body)
}

// joinNodeErrors sorts failures by node and says how many of total failed.
func joinNodeErrors(errs []*NodeError, total int) error {
	if len(errs) == 0 {
		return nil
	}
	slices.SortFunc(errs, func(a, b *NodeError) int { return strings.Compare(a.Node, b.Node) })
	all := make([]error, len(errs))
	ids := make([]string, len(errs))
	for i, e := range errs {
		all[i], ids[i] = e, e.Node
	}
	return fmt.Errorf("scrape metrics: %d of %d nodes failed (%s): %w", len(errs), total, strings.Join(ids, ", "), errors.Join(all...))
}
