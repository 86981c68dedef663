package load_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/segdiff/segdiff/internal/load"
)

// TestForkGas checks the pricing against the EIPs' arithmetic for a
// self-transfer of 100 zero and 100 non-zero bytes (tokens = 100 + 4·100).
func TestForkGas(t *testing.T) {
	data := append(make([]byte, 100), bytes.Repeat([]byte{1}, 100)...)
	a := common.HexToAddress("0x8943545177806ED17B9F23F0a21ee5948eCaa776")
	tests := []struct {
		fork load.Fork
		want uint64
		cap  uint64
	}{
		// EIP-7623: max(21000 + 4·100 + 16·100, 21000 + 10·500).
		{load.ForkPrague, 26_000, 0},
		// EIP-7825 adds the 2^24 cap, pricing unchanged.
		{load.ForkOsaka, 26_000, 1 << 24},
		// EIP-2780 base for a self-transfer without value 12000; EIP-7976:
		// 16 gas per token, 4 tokens per byte of any value: 12000 + 64·200.
		{load.ForkAmsterdam, 24_800, 1 << 24},
	}
	for _, tt := range tests {
		t.Run(string(tt.fork), func(t *testing.T) {
			got, err := tt.fork.Gas(a, a, data)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Gas = %d, want %d", got, tt.want)
			}
			if c := tt.fork.TxGasCap(); c != tt.cap {
				t.Errorf("TxGasCap = %d, want %d", c, tt.cap)
			}
		})
	}
}

// TestDetectFork asks simulated chains on Osaka and on Amsterdam rules.
func TestDetectFork(t *testing.T) {
	accts := accounts(t)
	probe := bytes.Repeat([]byte{0, 0, 7, 9}, 1024)
	for _, tt := range []struct {
		amsterdam bool
		want      load.Fork
	}{{false, load.ForkOsaka}, {true, load.ForkAmsterdam}} {
		t.Run(string(tt.want), func(t *testing.T) {
			b := newSim(t, tt.amsterdam)
			got, err := load.DetectFork(context.Background(), b.Client(), accts[0].Address, probe)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("DetectFork = %s, want %s", got, tt.want)
			}
		})
	}
}

// TestFillsAmsterdamBlocks loads a chain on Amsterdam rules (64 gas per
// calldata byte): the payloads still reach the target.
func TestFillsAmsterdamBlocks(t *testing.T) {
	ctx := context.Background()
	b := newSim(t, true)
	g := newLoad(t, b, nil)
	if g.Fork() != load.ForkAmsterdam {
		t.Fatalf("fork %s, want amsterdam", g.Fork())
	}
	for _, r := range steps(t, ctx, g, b, 2) {
		if r.Fill() < 0.95 || r.Fill() > 1.05 || r.IncludedTxs != r.SentTxs {
			t.Errorf("block %d: fill %.3f, sent %d included %d", r.Number, r.Fill(), r.SentTxs, r.IncludedTxs)
		}
	}
}

func TestParseFork(t *testing.T) {
	for _, tt := range []struct {
		in      string
		want    load.Fork
		wantErr bool
	}{{"auto", load.ForkAuto, false}, {"Osaka", load.ForkOsaka, false}, {" amsterdam ", load.ForkAmsterdam, false}, {"prague", load.ForkPrague, false}, {"cancun", "", true}, {"", "", true}} {
		got, err := load.ParseFork(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseFork(%q) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}
