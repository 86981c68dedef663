package load_test

import (
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/trie"

	"github.com/segdiff/segdiff/internal/load"
)

// TestEstimatePayload checks the SSZ arithmetic: 528 fixed bytes, extra
// data, 4 + len(tx) per transaction, 44 per withdrawal.
func TestEstimatePayload(t *testing.T) {
	accts := accounts(t)
	signer := types.LatestSignerForChainID(big.NewInt(1337))
	var txs []*types.Transaction
	total := 0
	for i, n := range []int{0, 100, 5000} {
		tx, err := types.SignNewTx(accts[0].Key, signer, &types.DynamicFeeTx{ChainID: big.NewInt(1337), Nonce: uint64(i), Gas: 21000,
			GasTipCap: big.NewInt(1), GasFeeCap: big.NewInt(2), To: &accts[0].Address, Data: make([]byte, n)})
		if err != nil {
			t.Fatal(err)
		}
		enc, _ := tx.MarshalBinary()
		total += 4 + len(enc)
		txs = append(txs, tx)
	}
	header := &types.Header{Number: big.NewInt(7), Extra: []byte("segdiff")}
	block := types.NewBlock(header, &types.Body{Transactions: txs, Withdrawals: []*types.Withdrawal{{}, {Index: 1}}}, nil, trie.NewStackTrie(nil))
	p, err := load.EstimatePayload(block)
	if err != nil {
		t.Fatal(err)
	}
	if want := 528 + 7 + 2*44 + total; p.Raw != want {
		t.Errorf("Raw = %d, want %d", p.Raw, want)
	}
	if p.Compressed <= 528 || p.Compressed >= p.Raw || p.Ratio() <= 1 {
		t.Errorf("Compressed = %d (ratio %.2f) of %d raw; zero calldata must compress", p.Compressed, p.Ratio(), p.Raw)
	}
	if (load.Payload{}).Ratio() != 0 {
		t.Error("empty payload ratio not 0")
	}
}
