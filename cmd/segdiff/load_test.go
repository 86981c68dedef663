package main

import (
	"bufio"
	"context"
	"io"
	"math"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/ethclient/simulated"

	"github.com/segdiff/segdiff/load"
	"github.com/segdiff/segdiff/load/loadtest"
)

// TestLoadFillsSimulatedBlocks is the acceptance run:
// `segdiff load --rpc URL --payload-bytes 1048576` against go-ethereum's
// simulated backend (served over HTTP on the loopback), which seals a block
// once the load's transactions for it are in its pool. Every block must be
// within ±5 % of 1 MiB raw and compress 1.40:1 ± 3 % with snappy.
func TestLoadFillsSimulatedBlocks(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, url := httpSim(t)
	var stdout, stderr strings.Builder
	done := make(chan int, 1)
	go func() {
		done <- runLoad(ctx, []string{"--rpc", url, "--payload-bytes", "1048576", "--blocks", "5", "--poll", "10ms", "--seed", "7"}, &stdout, &stderr)
	}()
	commitWhileRunning(t, ctx, b, done)
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
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return loadtest.NewBackend(t, accts, loadtest.HTTP(port)), "http://127.0.0.1:" + strconv.Itoa(port)
}

// commitWhileRunning seals a block whenever the pool has stopped growing,
// until the command finishes.
func commitWhileRunning(t *testing.T, ctx context.Context, b *simulated.Backend, done chan int) {
	t.Helper()
	last, stable := uint(0), 0
	for {
		select {
		case code := <-done:
			if code != 0 {
				t.Fatalf("segdiff load exit %d", code)
			}
			return
		case <-ctx.Done():
			t.Fatal("segdiff load did not finish")
		case <-time.After(10 * time.Millisecond):
		}
		n, err := b.Client().PendingTransactionCount(ctx)
		if err != nil {
			continue
		}
		if n > 0 && n == last {
			if stable++; stable >= 3 {
				b.Commit()
				stable, n = 0, 0
			}
		} else {
			stable = 0
		}
		last = n
	}
}
