package netmodel

import (
	"fmt"
	"net"
	"time"

	"github.com/marcopolo/simnet"

	"github.com/segdiff/segdiff/internal/devnet/embedded/seeds"
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

// Latency models.
const (
	LatencyGeo     = "geo"     // five regions, the prototype's matrix and jitter
	LatencyUniform = "uniform" // one fixed one-way latency between every pair
)

// RegionOf places node i: seeds.Mix(seed ^ RegionSalt ^ i) mod 100 against
// the cumulative region weights.
func RegionOf(seed int64, i int) int {
	v := seeds.Mix(uint64(seed)^seeds.RegionSalt^uint64(i)) % 100
	var cum uint64
	for r, w := range regionWeights {
		cum += w
		if v < cum {
			return r
		}
	}
	return len(regionWeights) - 1
}

// Latency is a precomputed one-way latency matrix between node indices.
// It is read-only after construction, so the per-packet lookup is safe from
// every simnet goroutine.
type Latency struct {
	n       int
	oneWay  []time.Duration // n×n
	regions []int           // region index per node; nil for uniform
}

// LatencyMatrixBytes is the memory NewLatency takes for n nodes.
func LatencyMatrixBytes(n int) int64 { return int64(n) * int64(n) * 8 }

// NewLatency builds the latency between n nodes: model LatencyUniform gives
// every pair uniform one way; LatencyGeo places nodes in regions by seed
// and applies the region matrix with a fixed per-pair jitter.
func NewLatency(model string, n int, seed int64, uniform time.Duration) (*Latency, error) {
	m := &Latency{n: n, oneWay: make([]time.Duration, n*n)}
	switch model {
	case LatencyUniform:
		for i := range m.oneWay {
			m.oneWay[i] = uniform
		}
		return m, nil
	case LatencyGeo:
	default:
		return nil, fmt.Errorf("latency model %q, want %s or %s", model, LatencyGeo, LatencyUniform)
	}
	m.regions = make([]int, n)
	for i := range m.regions {
		m.regions[i] = RegionOf(seed, i)
	}
	for lo := 0; lo < n; lo++ {
		m.oneWay[lo*n+lo] = time.Millisecond
		for hi := lo + 1; hi < n; hi++ {
			// Per-pair jitter fixed for the run: 0.8 + 0.4·(mix mod 1024)/1024.
			j := 0.8 + 0.4*float64(seeds.Mix(uint64(seed)^(uint64(lo)<<20)^uint64(hi))%1024)/1024
			base := regionBaseMs[m.regions[lo]][m.regions[hi]]
			d := time.Duration(base * j * float64(time.Millisecond))
			m.oneWay[lo*n+hi] = d
			m.oneWay[hi*n+lo] = d
		}
	}
	return m, nil
}

// Region names node i's region ("" under uniform latency).
func (m *Latency) Region(i int) string {
	if m.regions == nil {
		return ""
	}
	return Regions[m.regions[i]]
}

// Between returns the one-way latency from node a to node b.
func (m *Latency) Between(a, b int) time.Duration {
	return m.oneWay[a*m.n+b]
}

// PacketLatency is the simnet LatencyFunc: node indices come from the
// packet addresses (simnet.IntToPublicIPv4: low three octets minus one).
func (m *Latency) PacketLatency(p *simnet.Packet) time.Duration {
	a, okA := nodeIndex(p.From, m.n)
	b, okB := nodeIndex(p.To, m.n)
	if !okA || !okB {
		return unknownLatency
	}
	return m.Between(a, b)
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
