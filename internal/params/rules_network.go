package params

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// Rules on network_params. Defaults and messages are input_parser.star's at
// EthereumPackageCommit.

// Forks in activation order, with ethereum-package's default epochs.
var forks = []struct {
	key string
	def uint64
}{
	{"altair_fork_epoch", 0}, {"bellatrix_fork_epoch", 0}, {"capella_fork_epoch", 0}, {"deneb_fork_epoch", 0},
	{"electra_fork_epoch", 0}, {"fulu_fork_epoch", 0}, {"gloas_fork_epoch", FarFutureEpoch}, {"heze_fork_epoch", FarFutureEpoch},
}

// bpoDefaults are the default bpo_N_epoch values (mainnet and minimal).
var bpoDefaults = []struct {
	key string
	def uint64
}{
	{"bpo_1_epoch", 0}, {"bpo_2_epoch", 0}, {"bpo_3_epoch", FarFutureEpoch}, {"bpo_4_epoch", FarFutureEpoch}, {"bpo_5_epoch", FarFutureEpoch},
}

func (r *run) networkName(f *facts) {
	n := f.networkValue("network")
	if n == nil {
		return
	}
	name := deref(n).Value
	switch {
	case strings.Contains(name, "devnet"):
		r.add(n, "network_params.network", "%q joins the public devnet of that name (config downloaded from github.com/<devnet_repo>/…-devnets, default images rewritten, no local genesis); a local devnet must use network: kurtosis", name)
	case name != "kurtosis" && !strings.HasSuffix(name, "-shadowfork"):
		r.add(n, "network_params.network", "%q is not kurtosis: ethereum-package joins an existing network (validators zeroed, checkpoint sync); a local devnet must use network: kurtosis", name)
	}
}

// epoch is a network_params epoch: the user's value and its node, or def
// and nil when unset; false when it is set but not an epoch (value-types
// reports it, and the segdiff package refuses it before any rule that
// reads it could matter).
func (f *facts) epoch(key string, def uint64) (uint64, *yaml.Node, bool) {
	n := f.networkValue(key)
	if n == nil {
		return def, nil, true
	}
	v, ok := uintOf(n)
	return v, n, ok
}

// networkInt is a network_params integer, or def when unset; false when it
// is set but not an integer (reported by value-types).
func (f *facts) networkInt(key string, def int64) (int64, bool) {
	n := f.networkValue(key)
	if n == nil {
		return def, true
	}
	return intOf(n)
}

func (f *facts) preset() string {
	if n := f.networkValue("preset"); n != nil {
		return deref(n).Value
	}
	return "mainnet"
}

// joins reports whether network_params.network joins an existing network
// (ethereum-package then zeroes every validator_count).
func (f *facts) joins() bool {
	n := f.networkValue("network")
	if n == nil {
		return false
	}
	name := deref(n).Value
	return name != "kurtosis" && !strings.Contains(name, "shadowfork")
}

func (r *run) buildersGloas(f *facts) {
	n := f.networkValue("builder_count")
	if n == nil {
		return
	}
	count, ok := intOf(n)
	if !ok || count <= 0 {
		return
	}
	if gloas, _, ok := f.epoch("gloas_fork_epoch", FarFutureEpoch); ok && gloas != 0 {
		r.add(n, "network_params.builder_count", "builder_count is %d but gloas_fork_epoch is %d. Builders are only supported when gloas_fork_epoch is 0 (GLOAS at genesis).", count, gloas)
	}
}

// slotDuration mirrors parse_network_params: a value is "set" when it
// differs from the preset's default; setting one derives the other, and
// both set must agree.
func (r *run) slotDuration(f *facts) {
	defSeconds, defMS := int64(12), int64(12000)
	if f.preset() == "minimal" {
		defSeconds, defMS = 6, 6000
	}
	seconds, ok1 := f.networkInt("seconds_per_slot", defSeconds)
	ms, ok2 := f.networkInt("slot_duration_ms", defMS)
	if !ok1 || !ok2 {
		return
	}
	if seconds == 0 {
		r.add(f.networkValue("seconds_per_slot"), "network_params.seconds_per_slot", "seconds_per_slot is 0 needs to be > 0")
		return
	}
	if ms < 1000 {
		r.add(f.networkValue("slot_duration_ms"), "network_params.slot_duration_ms", "slot_duration_ms is %d, it needs to be at least 1000 (sub-second slots are not supported)", ms)
		return
	}
	if seconds != defSeconds && ms != defMS && seconds*1000 != ms {
		r.add(f.networkValue("slot_duration_ms"), "network_params.slot_duration_ms",
			"seconds_per_slot (%d) and slot_duration_ms (%d) are inconsistent. Expected slot_duration_ms to be %d. Use the same value for both, or only define one of them.", seconds, ms, seconds*1000)
	}
}

// nimbusSlotTime: nimbus needs >= 12 s slots on mainnet and exactly 6 s on
// minimal, judged on seconds_per_slot before slot_duration_ms is applied.
func (r *run) nimbusSlotTime(f *facts) {
	preset := f.preset()
	def := int64(12)
	if preset == "minimal" {
		def = 6
	}
	seconds, ok := f.networkInt("seconds_per_slot", def)
	if !ok {
		return
	}
	for _, p := range f.participants {
		if p.str("cl_type", "lighthouse") != "nimbus" {
			continue
		}
		kv := p.keys["cl_type"]
		switch {
		case preset == "mainnet" && seconds < 12:
			r.add(kv.v, p.path("cl_type"), "nimbus can't be run with slot times below 12 seconds with mainnet preset (seconds_per_slot %d)", seconds)
		case preset == "minimal" && seconds != 6:
			r.add(kv.v, p.path("cl_type"), "nimbus can't be run with slot times different than 6 seconds with minimal preset (seconds_per_slot %d)", seconds)
		default:
			continue
		}
		return // the package fails at the first
	}
}

// fuluBeforeBPO: when Fulu is not at genesis, every BPO epoch (the defaults
// of bpo_1 and bpo_2 are 0) must be at or after it.
func (r *run) fuluBeforeBPO(f *facts) {
	fulu, fn, ok := f.epoch("fulu_fork_epoch", 0)
	if !ok || fulu == 0 {
		return
	}
	for _, b := range bpoDefaults {
		epoch, n, ok := f.epoch(b.key, b.def)
		if !ok {
			return
		}
		if epoch >= fulu {
			continue
		}
		at, path := fn, "network_params.fulu_fork_epoch"
		if n != nil {
			at, path = n, "network_params."+b.key
		}
		r.add(at, path, "fulu_fork_epoch is not at genesis (%d), but %s (%d) is scheduled before it. BPO forks require Fulu, so when Fulu is not at genesis you must explicitly set every bpo_*_epoch to an epoch >= fulu_fork_epoch, or to %d to disable the BPO.",
			fulu, b.key, epoch, FarFutureEpoch)
		return
	}
}

// forkOrder: fork epochs must not decrease (Gloas builds on Fulu, and so
// on). ethereum-package does not check it and hands the genesis generator
// and the clients a schedule they cannot run.
func (r *run) forkOrder(f *facts) {
	for _, fk := range forks {
		if _, _, ok := f.epoch(fk.key, fk.def); !ok {
			return
		}
	}
	for i := 1; i < len(forks); i++ {
		later, ln, _ := f.epoch(forks[i].key, forks[i].def)
		for j := i - 1; j >= 0; j-- {
			earlier, en, _ := f.epoch(forks[j].key, forks[j].def)
			if later >= earlier {
				continue
			}
			at, path := ln, "network_params."+forks[i].key
			if at == nil {
				at, path = en, "network_params."+forks[j].key
			}
			r.add(at, path, "%s %s is before %s %s: forks activate in order, and ethereum-package passes this schedule on unchecked; schedule %s at or after %s",
				forks[i].key, epochText(later), forks[j].key, epochText(earlier), forks[i].key, forks[j].key)
			return
		}
	}
}

func epochText(e uint64) string {
	if e == FarFutureEpoch {
		return "FAR_FUTURE"
	}
	return fmt.Sprint(e)
}

// fuluCustody: a local network with Fulu scheduled needs a supernode, a
// participant with >= 128 validators, or perfect PeerDAS (16+ participants).
func (r *run) fuluCustody(f *facts) {
	fulu, _, ok := f.epoch("fulu_fork_epoch", 0)
	if !ok || fulu == FarFutureEpoch || f.uncounted {
		return
	}
	perfect := truthy(f.networkValue("perfect_peerdas_enabled"))
	if perfect && len(f.participants) < 16 {
		r.add(f.networkValue("perfect_peerdas_enabled"), "network_params.perfect_peerdas_enabled",
			"perfect_peerdas_enabled is true (this is a unique test if you don't know what it does, consider removing it) but the number of participants (%d) is less than 16. Please set the number of participants to at least 16.", len(f.participants))
		return
	}
	if perfect || f.joins() {
		return
	}
	keys, ok := f.networkInt("num_validator_keys_per_node", 128)
	if !ok {
		return // the package fails summing the default validator counts first
	}
	for _, p := range f.participants {
		// The package tests supernode for truth, as here.
		if truthy(p.keys["supernode"].v) {
			return
		}
		n, ok := p.validators(keys)
		if !ok || n >= 128 {
			return // not an integer: the package fails summing it first
		}
	}
	line := 1
	for _, key := range []string{"participants_matrix", "participants"} {
		if kv, ok := f.top[key]; ok {
			line = kv.kn.Line
		}
	}
	r.addAt(line, "participants", fmt.Sprintf("Fulu fork is enabled (epoch: %d) but no supernodes are configured, no nodes have 128 or more validators, and perfect_peerdas_enabled is not enabled. Either configure a supernode, ensure at least one node has 128+ validators, or enable perfect_peerdas_enabled in network_params with 16 participants.", fulu))
}
