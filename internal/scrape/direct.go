package scrape

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/segdiff/segdiff/internal/devnet"
	"github.com/segdiff/segdiff/metrics"
)

// acceptText asks for the classic text exposition, which metrics.Parse reads.
const acceptText = "text/plain;version=0.0.4;q=1,*/*;q=0.1"

// Direct scrapes each node's MetricsURL. It is safe for concurrent use.
type Direct struct {
	p *parameters
}

var _ Source = (*Direct)(nil)

// NewDirect returns a Direct source. Options: WithHTTPClient, WithTimeout,
// WithRetries, WithBackoff, WithConcurrency, WithMaxBodyBytes.
func NewDirect(opts ...Option) (*Direct, error) {
	p, err := parseAndCheckParameters(opts)
	if err != nil {
		return nil, fmt.Errorf("new direct scraper: %w", err)
	}
	return &Direct{p: p}, nil
}

// Snapshots scrapes every node, at most WithConcurrency at a time. See
// Source for partial results.
func (d *Direct) Snapshots(ctx context.Context, nodes []devnet.Node) (map[string]*metrics.Snapshot, error) {
	if err := checkNodes(nodes); err != nil {
		return nil, fmt.Errorf("scrape metrics: %w", err)
	}
	var (
		mu   sync.Mutex
		out  = make(map[string]*metrics.Snapshot, len(nodes))
		errs []*NodeError
		g    errgroup.Group
	)
	g.SetLimit(d.p.concurrency)
	for _, n := range nodes {
		// Go blocks while the limit is reached; a node's failure is
		// collected and never stops the others, so every func returns nil.
		g.Go(func() error {
			err := ctx.Err() // ended while waiting for a turn: no request
			var snap *metrics.Snapshot
			if err == nil {
				snap, err = d.Snapshot(ctx, n)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				var ne *NodeError
				if !errors.As(err, &ne) {
					ne = &NodeError{Node: n.ID, URL: n.MetricsURL, Err: err}
				}
				errs = append(errs, ne)
				return nil
			}
			out[n.ID] = snap
			return nil
		})
	}
	_ = g.Wait()
	return out, joinNodeErrors(errs, len(nodes))
}

// Snapshot scrapes one node, retrying transient failures. Errors are
// *NodeError naming the node and URL; the Snapshot's Source is the node ID.
func (d *Direct) Snapshot(ctx context.Context, n devnet.Node) (*metrics.Snapshot, error) {
	if n.MetricsURL == "" {
		return nil, &NodeError{Node: n.ID, Err: ErrNoMetricsURL}
	}
	if u, err := url.Parse(n.MetricsURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &NodeError{Node: n.ID, URL: n.MetricsURL, Err: ErrBadMetricsURL}
	}
	var body []byte
	err := d.p.retry(ctx, func(ctx context.Context) error {
		var err error
		body, err = d.fetch(ctx, n.MetricsURL)
		return err
	}, transientHTTP)
	if err != nil {
		return nil, &NodeError{Node: n.ID, URL: n.MetricsURL, Err: err}
	}
	snap, err := metrics.Parse(bytes.NewReader(body), n.ID)
	if err != nil {
		return nil, &NodeError{Node: n.ID, URL: n.MetricsURL, Err: err}
	}
	return snap, nil
}

// fetch GETs url and returns the whole body of a 2xx response.
func (d *Direct) fetch(ctx context.Context, target string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Accept", acceptText)
	resp, err := d.p.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
		return nil, &StatusError{Code: resp.StatusCode, Body: string(bytes.TrimSpace(snippet))}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, d.p.maxBody+1))
	if err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	if int64(len(body)) > d.p.maxBody {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrBodyTooLarge, d.p.maxBody)
	}
	return body, nil
}

// transientHTTP says whether a fetch error is worth retrying: transport
// errors and timeouts, HTTP 5xx and 429; not other statuses or an oversized
// body.
func transientHTTP(err error) bool {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Code >= 500 || se.Code == http.StatusTooManyRequests
	}
	return !errors.Is(err, ErrBodyTooLarge)
}
