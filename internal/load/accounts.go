package load

import (
	"crypto/ecdsa"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/sha512"
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

// DefaultMnemonic is ethereum-package's default
// preregistered_validator_keys_mnemonic (src/package_io/constants.star,
// DEFAULT_MNEMONIC, at the pinned commit 0350d2e). Its accounts
// m/44'/60'/0'/0/0…20 are prefunded in the devnet's genesis
// (genesis_constants.star, PRE_FUNDED_ACCOUNTS).
const DefaultMnemonic = "giant issue aisle success illegal bike spike question tent bar rely arctic volcano long crawl hungry vocal artwork sniff fantasy very lucky have athlete"

// Prefunded account indexes other ethereum-package services sign with at the
// pinned commit: buildoor instance on participant p uses p-1 (main.star), the
// deprecated mev_type buildoor 0, tx_fuzz 3 (src/tx_fuzz/tx_fuzz.star),
// spamoor 13 (src/spamoor/spamoor.star). Sharing one would race their nonces.
const (
	// DefaultFirstAccount is the first index the load uses: above spamoor's
	// 13 and above every buildoor instance of a devnet of up to 14
	// participants.
	DefaultFirstAccount = 14
	// DefaultAccounts is how many consecutive accounts the load uses
	// (14…19). ethereum-package prefunds 21 (0…20).
	DefaultAccounts = 6
	// PrefundedAccounts is how many accounts ethereum-package prefunds from
	// the mnemonic.
	PrefundedAccounts = 21
)

// Account is one signing account of the load.
type Account struct {
	// Index is the last element of the derivation path m/44'/60'/0'/0/Index.
	Index   uint32
	Address common.Address
	Key     *ecdsa.PrivateKey
}

// DeriveAccounts returns count accounts from mnemonic, starting at path
// m/44'/60'/0'/0/first (BIP-39 seed with an empty passphrase, BIP-32
// derivation, BIP-44 Ethereum path), the way ethereum-package derives its
// prefunded accounts. The mnemonic's words are not checked against the BIP-39
// word list: the seed is defined on any string.
func DeriveAccounts(mnemonic string, first, count int) ([]Account, error) {
	words, err := normalizeMnemonic(mnemonic)
	if err != nil {
		return nil, fmt.Errorf("derive accounts: %w", err)
	}
	if first < 0 || count < 1 || first+count > 1<<31 {
		return nil, fmt.Errorf("derive accounts: first %d and count %d must give indexes in [0, 2^31)", first, count)
	}
	seed, err := pbkdf2.Key(sha512.New, words, []byte("mnemonic"), 2048, 64)
	if err != nil {
		return nil, fmt.Errorf("derive accounts: BIP-39 seed: %w", err)
	}
	key, chain := hmacSHA512([]byte("Bitcoin seed"), seed)
	const hardened = 1 << 31
	for _, i := range []uint32{44 + hardened, 60 + hardened, 0 + hardened, 0} {
		if key, chain, err = childKey(key, chain, i); err != nil {
			return nil, fmt.Errorf("derive accounts: %w", err)
		}
	}
	out := make([]Account, 0, count)
	for i := uint32(first); i < uint32(first+count); i++ {
		k, _, err := childKey(key, chain, i)
		if err != nil {
			return nil, fmt.Errorf("derive accounts: index %d: %w", i, err)
		}
		priv, err := crypto.ToECDSA(k)
		if err != nil {
			return nil, fmt.Errorf("derive accounts: index %d: %w", i, err)
		}
		out = append(out, Account{Index: i, Address: crypto.PubkeyToAddress(priv.PublicKey), Key: priv})
	}
	return out, nil
}

// normalizeMnemonic joins the words with single spaces. Only ASCII is
// accepted: BIP-39 normalises with NFKD, which is the identity on ASCII, and
// ethereum-package's mnemonics are English.
func normalizeMnemonic(s string) (string, error) {
	words := strings.Fields(s)
	if len(words) == 0 {
		return "", errors.New("mnemonic is empty")
	}
	for _, w := range words {
		for _, r := range w {
			if r > 0x7f {
				return "", fmt.Errorf("mnemonic word %q is not ASCII (only English mnemonics are supported)", w)
			}
		}
	}
	return strings.Join(words, " "), nil
}

func hmacSHA512(key, data []byte) (left, right []byte) {
	m := hmac.New(sha512.New, key)
	m.Write(data)
	sum := m.Sum(nil)
	return sum[:32], sum[32:]
}

// childKey is BIP-32 CKDpriv.
func childKey(key, chain []byte, index uint32) ([]byte, []byte, error) {
	var data []byte
	if index >= 1<<31 {
		data = append([]byte{0}, key...)
	} else {
		priv, err := crypto.ToECDSA(key)
		if err != nil {
			return nil, nil, err
		}
		data = crypto.CompressPubkey(&priv.PublicKey)
	}
	data = binary.BigEndian.AppendUint32(data, index)
	il, ir := hmacSHA512(chain, data)
	n := crypto.S256().Params().N
	l := new(big.Int).SetBytes(il)
	if l.Cmp(n) >= 0 {
		return nil, nil, fmt.Errorf("BIP-32 child %d is invalid (IL ≥ n)", index)
	}
	k := l.Add(l, new(big.Int).SetBytes(key))
	k.Mod(k, n)
	if k.Sign() == 0 {
		return nil, nil, fmt.Errorf("BIP-32 child %d is invalid (zero key)", index)
	}
	return k.FillBytes(make([]byte, 32)), ir, nil
}
