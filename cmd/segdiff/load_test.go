package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/ethclient/simulated"

	"github.com/segdiff/segdiff/internal/load"
	"github.com/segdiff/segdiff/internal/load/loadtest"
)

// TestLoadFillsSimulatedBlocks is the acceptance run:
// `segdiff load --rpc URL --payload-bytes 1048576` against go-ethereum's
// simulated backend (served over HTTP on the loopback), which seals a block
// once the load's transactions for it are in its pool. Every block must be
// within ±5 % of 1 MiB raw and compress 1.40:1 ± 3 % with snappy.
func TestLoadFillsSimulatedBlocks(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, upstream := httpSim(t)
	sent := &sendCounter{upstreamURL: upstream}
	proxy := httptest.NewServer(sent)
	defer proxy.Close()
	url := proxy.URL
	var stdout, stderr strings.Builder
	done := make(chan int, 1)
	go func() {
		done <- runLoad(ctx, []string{"--rpc", url, "--payload-bytes", "1048576", "--blocks", "5", "--poll", "10ms", "--seed", "7"}, &stdout, &stderr)
	}()
	commitWhileRunning(t, ctx, b, sent, 1048576, done, &stderr)
	t.Logf("stdout:\n%s", stdout.String())
	rows := 0
	sc := bufio.NewScanner(strings.NewReader(stdout.String()))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 14 || f[0] == "block" {
			continue
		}
		rows++
		ratio, _ := strconv.ParseFloat(f[8], 64)
		fill, _ := strconv.ParseFloat(f[9], 64)
		if math.Abs(fill-1) > 0.05 || math.Abs(ratio-1.40) > 0.03*1.40 {
			t.Errorf("block %s: fill %.3f (want 1 ± 0.05), snappy ratio %.3f (want 1.40 ± 3 %%)", f[0], fill, ratio)
		}
	}
	if rows != 5 {
		t.Fatalf("%d block rows, want 5; stderr:\n%s", rows, stderr.String())
	}
}

func TestLoadFlags(t *testing.T) {
	for _, tt := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"ok", []string{"--rpc", "http://a:8545,http://b:8545", "--rpc", "http://c:8545"}, ""},
		{"no rpc", nil, "--rpc is required"},
		{"payload too large", []string{"--rpc", "x", "--payload-bytes", "9000000"}, "--payload-bytes 9000000"},
		{"tiny tx", []string{"--rpc", "x", "--tx-bytes", "10"}, "--tx-bytes 10"},
		{"bad fork", []string{"--rpc", "x", "--fork", "cancun"}, "--fork: unknown fork"},
		{"negative tip", []string{"--rpc", "x", "--tip-gwei", "-1"}, "--tip-gwei"},
		{"no accounts", []string{"--rpc", "x", "--accounts", "0"}, "--accounts 0"},
		{"stray argument", []string{"--rpc", "x", "more"}, "unexpected arguments"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, err := parseLoadFlags(tt.args, io.Discard)
			if tt.wantErr == "" {
				if err != nil || len(f.rpcs) != 3 {
					t.Fatalf("parse: %v, rpcs %v", err, f)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want %q", err, tt.wantErr)
			}
		})
	}
	var stderr strings.Builder
	if code := runLoad(context.Background(), []string{"--payload-bytes", "5"}, io.Discard, &stderr); code != 2 {
		t.Errorf("usage error exit %d, want 2 (%s)", code, stderr.String())
	}
}

// httpSim starts a simulated chain with the load's accounts funded, a
// devnet's 200M gas limit, and JSON-RPC over HTTP on a loopback port.
func httpSim(t *testing.T) (*simulated.Backend, string) {
	t.Helper()
	accts, err := load.DeriveAccounts(load.DefaultMnemonic, load.DefaultFirstAccount, load.DefaultAccounts)
	if err != nil {
		t.Fatal(err)
	}
	return loadtest.NewHTTPBackend(t, accts)
}

// sendCounter sits between the load and the simulated chain's JSON-RPC and
// counts the transactions (and their bytes) accepted since the last seal, so
// the test seals a block when the load has sent its block's worth rather than
// guessing from a quiet pool (a quiet window is too short under -race).
type sendCounter struct {
	mu          sync.Mutex
	txs, bytes  int
	lastSend    time.Time
	upstreamURL string
}

func (c *sendCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var call struct {
		Method string            `json:"method"`
		Params []json.RawMessage `json:"params"`
	}
	_ = json.Unmarshal(body, &call) // batches and others pass through uncounted
	req, err := http.NewRequestWithContext(r.Context(), r.Method, c.upstreamURL, bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	req.Header = r.Header.Clone()
	req.Header.Del("Accept-Encoding") // let the transport gunzip, so the reply can be read
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	if call.Method == "eth_sendRawTransaction" && len(call.Params) == 1 {
		var reply struct {
			Error json.RawMessage `json:"error"`
		}
		var raw string
		if json.Unmarshal(out, &reply) == nil && reply.Error == nil && json.Unmarshal(call.Params[0], &raw) == nil {
			c.mu.Lock()
			c.txs++
			c.bytes += (len(raw) - 2) / 2
			c.lastSend = time.Now()
			c.mu.Unlock()
		}
	}
	w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(out)
}

// take returns what was sent since the last call when the load has sent at
// least want bytes, or has sent something and then nothing for idle.
func (c *sendCounter) take(want int, idle time.Duration) (txs int, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.txs == 0 || (c.bytes < want && time.Since(c.lastSend) < idle) {
		return 0, false
	}
	txs = c.txs
	c.txs, c.bytes = 0, 0
	return txs, true
}

// commitWhileRunning seals a block once the load has sent a block's worth
// (target less the load's smallest transaction) and the pool holds all of
// it, until the command finishes.
func commitWhileRunning(t *testing.T, ctx context.Context, b *simulated.Backend, sent *sendCounter, target int, done chan int, stderr fmt.Stringer) {
	t.Helper()
	waiting := 0 // transactions sent for the next block, not yet seen in the pool
	for {
		select {
		case code := <-done:
			if code != 0 {
				t.Fatalf("segdiff load exit %d; stderr:\n%s", code, stderr)
			}
			return
		case <-ctx.Done():
			t.Fatal("segdiff load did not finish")
		case <-time.After(5 * time.Millisecond):
		}
		if waiting == 0 {
			n, ok := sent.take(target-load.MinTxDataBytes, 2*time.Second)
			if !ok {
				continue
			}
			waiting = n
		}
		n, err := b.Client().PendingTransactionCount(ctx)
		if err != nil || int(n) < waiting {
			continue // the pool promotes on its own goroutine
		}
		b.Commit()
		waiting = 0
	}
}

// TestLoadTableSummary: the summary line uses the one statistics convention
// (nearest-rank median: the lower middle of an even count), and a run that
// saw no block says so instead of failing on an empty sample.
func TestLoadTableSummary(t *testing.T) {
	tests := []struct {
		name   string
		fills  []float64
		ratios []float64
		want   string
	}{
		{name: "no blocks", want: "no blocks observed\n"},
		{name: "one block", fills: []float64{0.98}, ratios: []float64{1.41},
			want: "1 blocks: fill min 0.980 median 0.980 max 0.980; snappy ratio median 1.410\n"},
		{name: "even count: lower middle", fills: []float64{1.2, 0.9, 1.1, 1.0}, ratios: []float64{1.38, 1.42, 1.40, 1.44},
			want: "4 blocks: fill min 0.900 median 1.000 max 1.200; snappy ratio median 1.400\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			table := &loadTable{w: &out, rows: len(tt.fills), fills: tt.fills, ratios: tt.ratios}
			table.summary()
			if out.String() != tt.want {
				t.Errorf("summary %q, want %q", out.String(), tt.want)
			}
		})
	}
}
