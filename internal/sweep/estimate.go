package sweep

import (
	"fmt"
	"time"
)

// memClass groups cells whose memory is alike: the network's size and
// connections, the mode (whole payloads hold 1 MiB buffers per transfer)
// and the payload.
type memClass struct {
	nodes, degree, payload int
	mode                   string
}

func memClassOf(c Cell) memClass {
	return memClass{nodes: c.Config.Nodes, degree: c.Config.Degree, payload: c.Config.PayloadSize, mode: string(c.Config.Mode)}
}

// memoryModel is what a cell is expected to take: Config.MemoryEstimate
// until a cell of its class has finished, then that class's largest
// measured peak plus a tenth (the same class peaks differently by seed).
type memoryModel struct {
	peaks map[memClass]int64
}

func newMemoryModel() *memoryModel { return &memoryModel{peaks: map[memClass]int64{}} }

func (m *memoryModel) estimate(c Cell) int64 {
	if p, ok := m.peaks[memClassOf(c)]; ok && p > 0 {
		return p + p/10
	}
	return c.Memory
}

func (m *memoryModel) observe(c Cell, peak int64) {
	k := memClassOf(c)
	if peak > m.peaks[k] {
		m.peaks[k] = peak
	}
}

// costClass groups cells whose wall time is alike.
type costClass struct {
	mem      memClass
	payloads int
}

func costClassOf(c Cell) costClass { return costClass{mem: memClassOf(c), payloads: c.Config.Payloads} }

// work is a cell's size in the unit wall time scales with: connection
// ends × payload slots (the cost per packet is per connection).
func work(c Cell) float64 {
	return float64(c.Config.Nodes) * float64(c.Config.Degree) * float64(c.Config.Payloads+1)
}

// etaModel predicts a cell's wall time from finished cells: the mean of
// its class, else the work-weighted rate of every finished cell.
type etaModel struct {
	walls          map[costClass][]float64
	wallSum, units float64
}

func newETA() *etaModel { return &etaModel{walls: map[costClass][]float64{}} }

func (e *etaModel) observe(c Cell, wall float64) {
	if wall <= 0 {
		return
	}
	k := costClassOf(c)
	e.walls[k] = append(e.walls[k], wall)
	e.wallSum += wall
	e.units += work(c)
}

// predict returns the expected wall seconds of c, false when nothing has
// finished yet.
func (e *etaModel) predict(c Cell) (float64, bool) {
	if ws := e.walls[costClassOf(c)]; len(ws) > 0 {
		var sum float64
		for _, w := range ws {
			sum += w
		}
		return sum / float64(len(ws)), true
	}
	if e.units == 0 {
		return 0, false
	}
	return work(c) * e.wallSum / e.units, true
}

// line renders the sweep's ETA: the predicted seconds left of every
// pending and running cell, shared over the jobs.
func (e *etaModel) line(pending []Cell, active map[string]running, jobs int) string {
	if len(pending) == 0 && len(active) == 0 {
		return "sweep complete"
	}
	var left float64
	for _, c := range pending {
		w, ok := e.predict(c)
		if !ok {
			return "ETA unknown until a cell finishes"
		}
		left += w
	}
	for _, a := range active {
		w, ok := e.predict(a.cell)
		if !ok {
			return "ETA unknown until a cell finishes"
		}
		left += max(w-time.Since(a.started).Seconds(), 0)
	}
	par := min(jobs, len(pending)+len(active))
	d := time.Duration(left / float64(max(par, 1)) * float64(time.Second)).Round(time.Second)
	return fmt.Sprintf("%d left, ETA %v (about %s)", len(pending)+len(active), d, time.Now().Add(d).Format("15:04"))
}
