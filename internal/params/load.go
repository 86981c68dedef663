package params

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// LoadKeys are the keys of segdiff.load, the transaction load
// (kurtosis/src/package_io/sanity_check.star).
var LoadKeys = []string{"enabled", "payload_bytes", "first_account", "accounts", "fork", "image"}

// LoadForks are segdiff.load.fork's values (load.ParseFork).
var LoadForks = []string{"auto", "prague", "osaka", "amsterdam"}

// Limits of segdiff.load, as the package's input parser applies them.
const (
	LoadMinPayloadBytes = 1024
	// LoadMaxPayloadBytes: EIP-7934 (Osaka) caps an RLP block at 10 MiB
	// less a 2 MiB margin.
	LoadMaxPayloadBytes = 8 << 20
	// PrefundedAccounts is how many mnemonic accounts ethereum-package
	// prefunds (genesis_constants.star PRE_FUNDED_ACCOUNTS, 0…20).
	PrefundedAccounts = 21
)

// Prefunded account indexes other services sign with at the pinned commit:
// tx_fuzz 3 (src/tx_fuzz/tx_fuzz.star), spamoor 13 (src/spamoor/spamoor.star),
// a buildoor instance on participant p p-1 (main.star).
const (
	txFuzzAccount  = 3
	spamoorAccount = 13
)

// Calldata gas per byte at most, all bytes non-zero: 40 up to Osaka (EIP-7623
// floor, 10 per token, 4 tokens per non-zero byte) and 64 from Amsterdam
// (EIP-7976, 16 per token, 4 tokens per byte), plus a transaction base of at
// most 21000 per full 124 KiB transaction of the load.
const (
	gasPerByteOsaka     = 40
	gasPerByteAmsterdam = 64
	loadTxDataBytes     = 124 << 10
	txBaseGas           = 21000
	gloasGasLimit       = 200_000_000 // ethereum-package's gas_limit with Gloas scheduled
	defaultGenesisGas   = 60_000_000
)

// load checks segdiff.load: types and ranges as the package checks them, an
// account range that ethereum-package prefunds and no other service of the
// file signs with, and a payload the block gas limit can carry.
func (r *run) load(n *yaml.Node, ps []pair, f *facts) {
	const path = "segdiff.load"
	payload, first, count := int64(1<<20), int64(14), int64(6)
	var firstNode, payloadNode *yaml.Node
	for _, p := range ps {
		kp := join(path, p.key)
		switch p.key {
		case "enabled":
			if deref(p.v).Tag != "!!bool" {
				r.add(p.v, kp, "must be true or false, got %q", p.v.Value)
			}
		case "payload_bytes":
			if v, ok := r.int(p.v, kp); ok {
				payload, payloadNode = v, p.v
				if v < LoadMinPayloadBytes || v > LoadMaxPayloadBytes {
					r.add(p.v, kp, "%d outside [%d, %d] (EIP-7934 caps a block at 8 MiB)", v, LoadMinPayloadBytes, LoadMaxPayloadBytes)
				}
			}
		case "first_account":
			if v, ok := r.int(p.v, kp); ok {
				first, firstNode = v, p.v
				if v < 0 {
					r.add(p.v, kp, "must be >= 0, got %d", v)
				}
			}
		case "accounts":
			if v, ok := r.int(p.v, kp); ok {
				count = v
				if v < 1 {
					r.add(p.v, kp, "must be >= 1, got %d", v)
				}
			}
		case "fork":
			if !slices.Contains(LoadForks, p.v.Value) {
				r.add(p.v, kp, "unknown fork %q; use one of %s%s", p.v.Value, strings.Join(LoadForks, ", "), didYouMean(p.v.Value, LoadForks))
			}
		case "image":
			if deref(p.v).Kind != yaml.ScalarNode || p.v.Value == "" {
				r.add(p.v, kp, "must be an image reference")
			}
		}
	}
	at := firstNode
	if at == nil {
		at = n
	}
	if first >= 0 && count >= 1 && first+count > PrefundedAccounts {
		r.add(at, path, "uses accounts %d..%d, but ethereum-package prefunds 0..%d only", first, first+count-1, PrefundedAccounts-1)
	}
	for index, who := range loadSigners(f) {
		if index >= first && index < first+count {
			r.add(at, path, "uses prefunded account %d, which %s signs with; move segdiff.load.first_account", index, who)
		}
	}
	if payloadNode == nil {
		payloadNode = n
	}
	limit, amsterdam := gasLimit(f)
	perByte := int64(gasPerByteOsaka)
	if amsterdam {
		perByte = gasPerByteAmsterdam
	}
	if need := payload*perByte + (payload/loadTxDataBytes+1)*txBaseGas; payload >= LoadMinPayloadBytes && payload <= LoadMaxPayloadBytes && need > limit {
		r.add(payloadNode, join(path, "payload_bytes"), "%d bytes of calldata need up to %d gas per block (%d gas per byte), above the block gas limit %d; lower payload_bytes or raise network_params.gas_limit",
			payload, need, perByte, limit)
	}
}

// loadSigners maps the prefunded account indexes other services of the file
// sign with to their names.
func loadSigners(f *facts) map[int64]string {
	out := map[int64]string{}
	has := func(name string) bool {
		return slices.ContainsFunc(f.services, func(s service) bool { return s.name == name })
	}
	if has("tx_fuzz") {
		out[txFuzzAccount] = "tx_fuzz"
	}
	if has("spamoor") {
		out[spamoorAccount] = "spamoor"
	}
	if !has("buildoor") {
		return out
	}
	participants := []int64{}
	if b, ok := f.top["buildoor_params"]; ok {
		if ps, ok := pairsOf(b.v); ok {
			for _, p := range ps {
				if p.key != "instances" || deref(p.v).Kind != yaml.SequenceNode {
					continue
				}
				for _, item := range deref(p.v).Content {
					part := int64(1)
					if ips, ok := pairsOf(item); ok {
						for _, q := range ips {
							if v, ok := intOf(q.v); ok && q.key == "participant" {
								part = v
							}
						}
					}
					participants = append(participants, part)
				}
			}
		}
	}
	if len(participants) == 0 {
		participants = []int64{1} // buildoor without instances builds on participant 1
	}
	for _, p := range participants {
		out[p-1] = fmt.Sprintf("buildoor on participant %d", p)
	}
	return out
}

// gasLimit is the block gas limit the file's devnet runs with, and whether
// Gloas (so Amsterdam on the EL) is scheduled: network_params.gas_limit if
// non-zero, else 200M with Gloas scheduled, else genesis_gaslimit (60M).
func gasLimit(f *facts) (limit int64, gloas bool) {
	var gas, genesis int64
	if p, ok := f.network["gas_limit"]; ok {
		gas, _ = intOf(p.v)
	}
	if p, ok := f.network["genesis_gaslimit"]; ok {
		genesis, _ = intOf(p.v)
	}
	if p, ok := f.network["gloas_fork_epoch"]; ok {
		v, ok := uintOf(p.v)
		gloas = ok && v != FarFutureEpoch
	}
	switch {
	case gas > 0:
		return gas, gloas
	case gloas:
		return gloasGasLimit, true
	case genesis > 0:
		return genesis, false
	}
	return defaultGenesisGas, false
}
