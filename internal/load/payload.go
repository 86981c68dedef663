package load

import (
	"encoding/binary"
	"fmt"

	gosnappy "github.com/golang/snappy"

	"github.com/ethereum/go-ethereum/core/types"
)

// Sizes of the SSZ ExecutionPayload (Deneb layout, unchanged through Fulu
// and in Gloas's envelope): 528 bytes of fixed fields and offsets, 4 bytes of
// offset per transaction, 44 bytes per withdrawal. Amsterdam's block access
// list (EIP-7928) is not in a block go-ethereum returns over RPC and is left
// out; for the load's transactions it is a few dozen bytes per account.
const (
	payloadFixedSize = 528
	txOffsetSize     = 4
	withdrawalSize   = 44
)

// Payload is a block's execution payload as the load estimates it.
type Payload struct {
	// Raw is the estimated SSZ size of the ExecutionPayload: what the
	// metrics contract's payload_diffusion_payload_size_bytes{encoding="raw"}
	// reports, up to the access list.
	Raw int
	// Compressed is the snappy block encoding's size of the same bytes
	// (golang/snappy, the encoder of Prysm's gossip), with the fixed fields
	// counted as incompressible.
	Compressed int
}

// Ratio is Raw / Compressed (0 when empty).
func (p Payload) Ratio() float64 {
	if p.Compressed == 0 {
		return 0
	}
	return float64(p.Raw) / float64(p.Compressed)
}

// TxPayloadSize is what one transaction adds to the SSZ payload: its
// canonical encoding plus the list offset.
func TxPayloadSize(tx *types.Transaction) int {
	return int(tx.Size()) + txOffsetSize
}

// EstimatePayload estimates b's SSZ execution payload and compresses its
// transaction list as the SSZ list encodes it (offsets, then the
// transactions' canonical encodings).
func EstimatePayload(b *types.Block) (Payload, error) {
	txs := b.Transactions()
	list := make([]byte, 0, txOffsetSize*len(txs)+int(b.Size()))
	offset := txOffsetSize * len(txs)
	encoded := make([][]byte, len(txs))
	for i, tx := range txs {
		enc, err := tx.MarshalBinary()
		if err != nil {
			return Payload{}, fmt.Errorf("encode transaction %s of block %d: %w", tx.Hash(), b.NumberU64(), err)
		}
		encoded[i] = enc
		list = binary.LittleEndian.AppendUint32(list, uint32(offset))
		offset += len(enc)
	}
	for _, enc := range encoded {
		list = append(list, enc...)
	}
	fixed := payloadFixedSize + len(b.Extra()) + withdrawalSize*len(b.Withdrawals())
	return Payload{Raw: fixed + len(list), Compressed: fixed + len(gosnappy.Encode(nil, list))}, nil
}
