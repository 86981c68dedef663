package load_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/segdiff/segdiff/internal/load"
)

func TestClassify(t *testing.T) {
	for _, tt := range []struct {
		msg  string
		want load.ErrorClass
	}{
		{"already known", load.ClassKnown},
		{"AlreadyKnown", load.ClassKnown},
		{"replacement transaction underpriced", load.ClassUnderpriced},
		{"transaction underpriced: tip needed 1, tip permitted 0", load.ClassUnderpriced},
		{"FeeTooLow, MaxFeePerGas too low", load.ClassUnderpriced},
		{"nonce too low: next nonce 5, tx nonce 3", load.ClassNonceLow},
		{"OldNonce", load.ClassNonceLow},
		{"nonce too high", load.ClassNonceGap},
		{"NonceGap, future nonce", load.ClassNonceGap},
		{"txpool is full", load.ClassPoolFull},
		{"account limit exceeded", load.ClassPoolFull},
		{"Post \"http://x\": dial tcp 127.0.0.1:1: connect: connection refused", load.ClassTransport},
		{"insufficient funds for gas * price + value", load.ClassFatal},
		{"intrinsic gas too low: have 21000, want 53000", load.ClassGas},
		{"insufficient gas for floor data gas cost: have 1, want 2", load.ClassGas},
		{"oversized data", load.ClassFatal},
	} {
		if got := load.Classify(errors.New(tt.msg)); got != tt.want {
			t.Errorf("Classify(%q) = %s, want %s", tt.msg, got, tt.want)
		}
	}
	if got := load.Classify(fmt.Errorf("send: %w", context.DeadlineExceeded)); got != load.ClassTransport {
		t.Errorf("deadline: %s, want transport", got)
	}
	if got := load.Classify(nil); got != "" {
		t.Errorf("nil: %q, want empty", got)
	}
}

// FuzzClassify: any message gets exactly one known class, deterministically.
func FuzzClassify(f *testing.F) {
	for _, s := range []string{"already known", "nonce too low", "txpool is full", "", "ü\x00"} {
		f.Add(s)
	}
	known := map[load.ErrorClass]bool{load.ClassKnown: true, load.ClassNonceLow: true, load.ClassNonceGap: true,
		load.ClassUnderpriced: true, load.ClassPoolFull: true, load.ClassGas: true, load.ClassTransport: true, load.ClassFatal: true}
	f.Fuzz(func(t *testing.T, msg string) {
		c := load.Classify(errors.New(msg))
		if !known[c] || c != load.Classify(errors.New(msg)) {
			t.Fatalf("Classify(%q) = %q", msg, c)
		}
	})
}

// FuzzDeriveAccounts: mnemonic input never panics; a derived account's key
// belongs to its address.
func FuzzDeriveAccounts(f *testing.F) {
	f.Add("giant issue aisle", 0)
	f.Add("", 3)
	f.Add("a\u00a0b", -1)
	f.Fuzz(func(t *testing.T, mnemonic string, first int) {
		accts, err := load.DeriveAccounts(mnemonic, first%64, 1)
		if err != nil {
			return
		}
		if len(accts) != 1 || accts[0].Key == nil {
			t.Fatalf("DeriveAccounts(%q, %d) = %v", mnemonic, first, accts)
		}
	})
}

// FuzzParseFork: a name is accepted exactly when it is one of the known
// forks, whatever the case or surrounding space.
func FuzzParseFork(f *testing.F) {
	for _, s := range []string{"auto", " Osaka ", "amsterdam", "cancun", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := load.ParseFork(s)
		if err == nil && got != load.ForkAuto && !slices.Contains(load.Forks, got) {
			t.Fatalf("ParseFork(%q) = %q", s, got)
		}
	})
}
