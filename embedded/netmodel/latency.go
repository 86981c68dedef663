package embedded

import (
	"net"
	"time"

	"github.com/marcopolo/simnet"
)

// Regions of the "geo" latency model, in matrix order, with their weights
// (of 100): eu 35, na-east 20, na-west 10, asia 25, rest 10.
var (
	Regions       = []string{"eu", "na-east", "na-west", "asia", "rest"}
	regionWeights = []uint64{35, 20, 10, 25, 10}
	// regionBaseMs is the symmetric one-way base latency between regions;
	// the weighted mean is 55.6 ms.
	regionBaseMs = [5][5]float64{
		{8, 40, 70, 90, 110},
		{40, 8, 30, 80, 60},
		{70, 30, 8, 60, 70},
		{90, 80, 60, 10, 70},
		{110, 60, 70, 70, 15},
	}
)

// unknownLatency is used for packets whose endpoints are not simulated nodes.
const unknownLatency = 25 * time.Millisecond

// geoMix is the splitmix64 finalizer the prototype uses for placement and
// jitter, so a seed places nodes exactly as the study did.
func geoMix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// regionOf places node i: geoMix(seed ^ 0x9e01a7e ^ i) mod 100 against the
// cumulative region weights.
func regionOf(seed int64, i int) int {
	v := geoMix(uint64(seed)^0x9e01a7e^uint64(i)) % 100
	var cum uint64
	for r, w := range regionWeights {
		cum += w
		if v < cum {
			return r
		}
	}
	return len(regionWeights) - 1
}

// latencyModel is a precomputed one-way latency matrix between node indices.
// It is read-only after construction, so the per-packet lookup is safe from
// every simnet goroutine.
type latencyModel struct {
	n       int
	oneWay  []time.Duration // n×n
	regions []int           // region index per node; nil for uniform
}

func newLatencyModel(c Config) *latencyModel {
	m := &latencyModel{n: c.Nodes, oneWay: make([]time.Duration, c.Nodes*c.Nodes)}
	if c.Latency == "uniform" {
		for i := range m.oneWay {
			m.oneWay[i] = c.UniformLatency
		}
		return m
	}
	m.regions = make([]int, c.Nodes)
	for i := range m.regions {
		m.regions[i] = regionOf(c.Seed, i)
	}
	for lo := 0; lo < c.Nodes; lo++ {
		m.oneWay[lo*c.Nodes+lo] = time.Millisecond
		for hi := lo + 1; hi < c.Nodes; hi++ {
			// Per-pair jitter fixed for the run: 0.8 + 0.4·(mix mod 1024)/1024.
			j := 0.8 + 0.4*float64(geoMix(uint64(c.Seed)^(uint64(lo)<<20)^uint64(hi))%1024)/1024
			base := regionBaseMs[m.regions[lo]][m.regions[hi]]
			d := time.Duration(base * j * float64(time.Millisecond))
			m.oneWay[lo*c.Nodes+hi] = d
			m.oneWay[hi*c.Nodes+lo] = d
		}
	}
	return m
}

// region names node i's region ("" under uniform latency).
func (m *latencyModel) region(i int) string {
	if m.regions == nil {
		return ""
	}
	return Regions[m.regions[i]]
}

// between returns the one-way latency from node a to node b.
func (m *latencyModel) between(a, b int) time.Duration {
	return m.oneWay[a*m.n+b]
}

// packetLatency is the simnet LatencyFunc: node indices come from the packet
// addresses (simnet.IntToPublicIPv4: low three octets minus one).
func (m *latencyModel) packetLatency(p *simnet.Packet) time.Duration {
	a, okA := nodeIndex(p.From, m.n)
	b, okB := nodeIndex(p.To, m.n)
	if !okA || !okB {
		return unknownLatency
	}
	return m.between(a, b)
}

func nodeIndex(addr net.Addr, n int) (int, bool) {
	u, ok := addr.(*net.UDPAddr)
	if !ok {
		return 0, false
	}
	ip := u.IP.To4()
	if ip == nil {
		return 0, false
	}
	i := (int(ip[1])<<16 | int(ip[2])<<8 | int(ip[3])) - 1
	if i < 0 || i >= n {
		return 0, false
	}
	return i, true
}
