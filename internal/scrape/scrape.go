// Package scrape gets metrics.Snapshots of a devnet's nodes over HTTP: either
// directly from each node's /metrics endpoint (Direct) or from a Prometheus
// that scrapes them, with one instant PromQL query per contract series
// (PromQL). Both build the same per-node metrics.Snapshot, so assertions do
// not care which one the suite uses.
package scrape

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/segdiff/segdiff/internal/devnet"
	"github.com/segdiff/segdiff/internal/poll"
	"github.com/segdiff/segdiff/metrics"
)

// Source reads the contract series of many nodes. Implementations are safe
// for concurrent use.
type Source interface {
	// Snapshots returns one Snapshot per node that could be read, keyed by
	// node ID. When some nodes fail it returns the snapshots it has together
	// with an error naming every failed node (each a *NodeError).
	Snapshots(ctx context.Context, nodes []devnet.Node) (map[string]*metrics.Snapshot, error)
}

// Defaults of the options.
const (
	DefaultTimeout      = 5 * time.Second
	DefaultRetries      = 2
	DefaultBackoff      = 250 * time.Millisecond
	DefaultMaxBackoff   = 2 * time.Second
	DefaultConcurrency  = 8
	DefaultMaxBodyBytes = 64 << 20
	DefaultNodeLabel    = "segdiff_node"
)

// Option configures a Direct or PromQL source.
type Option func(*parameters) error

type parameters struct {
	client      *http.Client
	timeout     time.Duration
	retries     int
	backoff     time.Duration
	maxBackoff  time.Duration
	concurrency int
	maxBody     int64
	now         func() time.Time
	nodeLabel   string
}

// WithHTTPClient sets the HTTP client. Default: a client with no overall
// timeout of its own (WithTimeout bounds each request).
func WithHTTPClient(c *http.Client) Option {
	return func(p *parameters) error {
		if c == nil {
			return errors.New("nil http client")
		}
		p.client = c
		return nil
	}
}

// WithTimeout bounds each HTTP request (one scrape, or one PromQL query),
// reading the body included. Default DefaultTimeout (5 s).
func WithTimeout(d time.Duration) Option {
	return func(p *parameters) error {
		if d <= 0 {
			return fmt.Errorf("timeout %v: must be positive", d)
		}
		p.timeout = d
		return nil
	}
}

// WithRetries sets how many times a transient failure (network error,
// timeout, HTTP 5xx or 429) is retried; 0 disables retries. Default
// DefaultRetries (2, i.e. at most 3 attempts).
func WithRetries(n int) Option {
	return func(p *parameters) error {
		if n < 0 {
			return fmt.Errorf("retries %d: must not be negative", n)
		}
		p.retries = n
		return nil
	}
}

// WithBackoff sets the wait before the first retry and its cap; the wait
// doubles after each retry. Defaults DefaultBackoff (250 ms) and
// DefaultMaxBackoff (2 s). Tests pass a millisecond.
func WithBackoff(initial, maxWait time.Duration) Option {
	return func(p *parameters) error {
		if initial < 0 || maxWait < initial {
			return fmt.Errorf("backoff %v up to %v: want 0 ≤ initial ≤ max", initial, maxWait)
		}
		p.backoff, p.maxBackoff = initial, maxWait
		return nil
	}
}

// WithConcurrency bounds how many nodes Direct scrapes at once. Default
// DefaultConcurrency (8).
func WithConcurrency(n int) Option {
	return func(p *parameters) error {
		if n < 1 {
			return fmt.Errorf("concurrency %d: must be at least 1", n)
		}
		p.concurrency = n
		return nil
	}
}

// WithMaxBodyBytes bounds a /metrics response body; a longer one is an
// error. Default DefaultMaxBodyBytes (64 MiB).
func WithMaxBodyBytes(n int64) Option {
	return func(p *parameters) error {
		if n < 1 {
			return fmt.Errorf("max body bytes %d: must be positive", n)
		}
		p.maxBody = n
		return nil
	}
}

// WithNow sets the clock giving the evaluation time of PromQL instant
// queries. Default time.Now. Direct ignores it.
func WithNow(now func() time.Time) Option {
	return func(p *parameters) error {
		if now == nil {
			return errors.New("nil clock")
		}
		p.now = now
		return nil
	}
}

// WithNodeLabel sets the label PromQL maps series to nodes by. Default
// DefaultNodeLabel ("segdiff_node"), the label the segdiff Kurtosis
// package's Prometheus puts on every target. Direct ignores it.
func WithNodeLabel(name string) Option {
	return func(p *parameters) error {
		if name == "" {
			return errors.New("empty node label")
		}
		p.nodeLabel = name
		return nil
	}
}

func parseAndCheckParameters(opts []Option) (*parameters, error) {
	p := &parameters{
		client:      &http.Client{},
		timeout:     DefaultTimeout,
		retries:     DefaultRetries,
		backoff:     DefaultBackoff,
		maxBackoff:  DefaultMaxBackoff,
		concurrency: DefaultConcurrency,
		maxBody:     DefaultMaxBodyBytes,
		now:         time.Now,
		nodeLabel:   DefaultNodeLabel,
	}
	for _, opt := range opts {
		if err := opt(p); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// retry runs attempt until it succeeds, fails permanently (transient
// reports false) or the retries are spent, sleeping the backoff in between
// (poll.Retry). When ctx ends, the error wraps both ctx's error and the
// last transient one.
func (p *parameters) retry(ctx context.Context, attempt func(ctx context.Context) error, transient func(error) bool) error {
	b := poll.Backoff{Initial: p.backoff, Max: p.maxBackoff}
	return poll.Retry(ctx, b, p.retries+1, func(ctx context.Context) error {
		actx, cancel := context.WithTimeout(ctx, p.timeout)
		defer cancel()
		err := attempt(actx)
		if err != nil && ctx.Err() == nil && !transient(err) {
			return poll.Stop(err)
		}
		return err
	}, nil)
}

// checkNodes rejects an empty or ambiguous node list.
func checkNodes(nodes []devnet.Node) error {
	if len(nodes) == 0 {
		return ErrNoNodes
	}
	seen := make(map[string]bool, len(nodes))
	for i, n := range nodes {
		if n.ID == "" {
			return fmt.Errorf("node %d: %w", i, ErrNoNodeID)
		}
		if seen[n.ID] {
			return fmt.Errorf("node %s: %w", n.ID, ErrDuplicateNode)
		}
		seen[n.ID] = true
	}
	return nil
}
