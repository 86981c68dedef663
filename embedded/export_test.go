package embedded

// Test hooks into unexported model code.
var (
	PTCCommittee = ptcCommittee
	RegionOf     = regionOf
	// FirstSlotStart and HeartbeatInterval expose the reveal-phase rule.
	FirstSlotStart    = firstSlotStart
	HeartbeatInterval = heartbeatInterval
	SeedGlobalRand    = seedGlobalRand
)

// LatencyMatrix returns the one-way latency between every pair of c's nodes.
func LatencyMatrix(c Config) func(a, b int) float64 {
	m := newLatencyModel(c)
	return func(a, b int) float64 { return float64(m.between(a, b).Microseconds()) / 1000 }
}
