// Package seeds names every random stream an embedded run draws from its
// seed, in one place. Each stream has its own generator, so that a draw
// added to one never shifts another; the topology, placement and jitter
// streams reproduce the prototype harness's generators exactly, so a seed
// builds the network the published study built.
package seeds

import "math/rand/v2"

// Salts and multipliers that separate the streams.
const (
	// TopologySalt: the random regular graph draws from PCG(seed,
	// seed^TopologySalt), as the prototype's RandomRegular does.
	TopologySalt uint64 = 0x9e3779b97f4a7c15
	// RegionSalt: node i's latency region is Mix(seed^RegionSalt^i) mod 100
	// against the region weights, as the prototype's geo model places it.
	// The per-pair jitter is Mix(seed ^ lo<<20 ^ hi), unsalted, as there.
	RegionSalt uint64 = 0x9e01a7e
	// ProposerSalt: the proposer of each payload slot.
	ProposerSalt uint64 = 0x5eed
	// PayloadMultiplier: slot s's synthetic body draws from
	// PCG(seed·PayloadMultiplier, s).
	PayloadMultiplier uint64 = 1000003
	// PTCSalt: slot s's committee shuffle draws from PCG(seed^PTCSalt, s).
	PTCSalt uint64 = 0x70c0ffee
	// HeartbeatPhaseSalt: where in the routers' heartbeat period the first
	// reveal falls.
	HeartbeatPhaseSalt uint64 = 0x4842
	// RolesSalt: which nodes hold the adversarial roles.
	RolesSalt uint64 = 0x801e5
	// OmitSalt: which parts the builder omits.
	OmitSalt uint64 = 0x0a17
	// LossSalt: node i's loss draws come from PCG(seed^LossSalt, i).
	LossSalt uint64 = 0x1055
	// UplinkSalt: each node's uplink within the spread.
	UplinkSalt uint64 = 0x0b1d
	// FlowBucketSalt: which FQ-CoDel bucket a peer's flow hashes to on
	// each of a node's links (flows-cc-simnet).
	FlowBucketSalt uint64 = 0xb0c7
)

// Topology returns the random regular graph's stream.
func Topology(seed int64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), uint64(seed)^TopologySalt))
}

// Proposers returns the stream proposers are drawn from, slot by slot.
func Proposers(seed int64) *rand.Rand { return rand.New(rand.NewPCG(uint64(seed), ProposerSalt)) }

// Payload returns the stream of slot's synthetic payload body.
func Payload(seed int64, slot uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed)*PayloadMultiplier, slot))
}

// PTC returns the stream of slot's committee shuffle.
func PTC(seed int64, slot uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed)^PTCSalt, slot))
}

// HeartbeatPhase returns the stream of the first reveal's heartbeat phase.
func HeartbeatPhase(seed int64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), HeartbeatPhaseSalt))
}

// Mix is the splitmix64 finalizer the prototype uses for placement and
// jitter.
func Mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// Roles returns the stream the adversarial roles are placed from.
func Roles(seed int64) *rand.Rand { return rand.New(rand.NewPCG(uint64(seed), RolesSalt)) }

// Omit returns the stream of the parts the builder omits in slot.
func Omit(seed int64, slot uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed)^OmitSalt, slot))
}

// Loss returns node i's stream of loss draws.
func Loss(seed int64, node int) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed)^LossSalt, uint64(node)))
}

// Uplinks returns the stream each node's uplink is drawn from.
func Uplinks(seed int64) *rand.Rand { return rand.New(rand.NewPCG(uint64(seed), UplinkSalt)) }

// FlowBucket is the bucket, of buckets, that peer's flow hashes to on
// node's uplink (or downlink). simnet hashes each packet's addresses with
// a seed drawn per link at random; this draw is the seed's, so a run can
// be repeated, and each link's is its own.
func FlowBucket(seed int64, node int, uplink bool, peer, buckets int) int {
	dir := uint64(0)
	if uplink {
		dir = 1
	}
	key := Mix(uint64(seed) ^ FlowBucketSalt ^ uint64(node)<<33 ^ dir<<32)
	return int(Mix(key^uint64(peer)) % uint64(buckets))
}
