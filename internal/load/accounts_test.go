package load_test

import (
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/segdiff/segdiff/internal/load"
)

// TestDeriveAccounts checks the derivation against ethereum-package's
// PRE_FUNDED_ACCOUNTS (genesis_constants.star at 0350d2e).
func TestDeriveAccounts(t *testing.T) {
	want := map[uint32][2]string{
		0:  {"0x8943545177806ED17B9F23F0a21ee5948eCaa776", "bcdf20249abf0ed6d944c0288fad489e33f66b3960d9e6229c1cd214ed3bbe31"},
		1:  {"0xE25583099BA105D9ec0A67f5Ae86D90e50036425", "39725efee3fb28614de3bacaffe4cc4bd8c436257e2c8bb887c4b5c4be45e76d"},
		20: {"0xafF0CA253b97e54440965855cec0A8a2E2399896", "04b9f63ecf84210c5366c66d68fa1f5da1fa4f634fad6dfc86178e4d79ff9e59"},
	}
	for index, w := range want {
		// Extra whitespace is not part of the mnemonic.
		got, err := load.DeriveAccounts("  "+strings.ReplaceAll(load.DefaultMnemonic, " ", "\n ")+" ", int(index), 1)
		if err != nil {
			t.Fatal(err)
		}
		if got[0].Index != index || got[0].Address.Hex() != w[0] {
			t.Errorf("index %d: address %s, want %s", index, got[0].Address.Hex(), w[0])
		}
		if k := common2hex(crypto.FromECDSA(got[0].Key)); k != w[1] {
			t.Errorf("index %d: key %s, want %s", index, k, w[1])
		}
	}
	// The load's default range is consecutive and distinct.
	accts := accounts(t)
	if len(accts) != load.DefaultAccounts || accts[0].Index != load.DefaultFirstAccount {
		t.Fatalf("default accounts start at %d, %d of them", accts[0].Index, len(accts))
	}
}

func TestDeriveAccountsRejects(t *testing.T) {
	for _, tt := range []struct {
		name, mnemonic string
		first, count   int
		want           string
	}{
		{"empty", " \t", 0, 1, "empty"},
		{"non-ASCII", "giant issue aisle ünd", 0, 1, "not ASCII"},
		{"negative first", load.DefaultMnemonic, -1, 1, "first -1"},
		{"no accounts", load.DefaultMnemonic, 0, 0, "count 0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load.DeriveAccounts(tt.mnemonic, tt.first, tt.count)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func common2hex(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 2*len(b))
	for i, c := range b {
		out[2*i], out[2*i+1] = digits[c>>4], digits[c&15]
	}
	return string(out)
}
