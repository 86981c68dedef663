package kurtosis

import (
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAvailabilityRun(t *testing.T) {
	tests := []struct {
		name      string
		reports   map[string][]uint64
		n         int
		from      uint64
		wantFirst uint64
		wantOK    bool
	}{
		{"three on both", map[string][]uint64{"a": {33, 34, 35}, "b": {33, 34, 35}}, 3, 0, 33, true},
		{"a gap on one node", map[string][]uint64{"a": {33, 34, 35, 36}, "b": {33, 35, 36}}, 3, 0, 0, false},
		{"the run after a gap", map[string][]uint64{"a": {33, 34, 35, 36, 37}, "b": {33, 35, 36, 37}}, 3, 0, 35, true},
		{"the earliest run", map[string][]uint64{"a": {40, 41, 42, 50, 51, 52}, "b": {40, 41, 42, 50, 51, 52}}, 3, 0, 40, true},
		{"a node without reports", map[string][]uint64{"a": {33, 34, 35}, "b": nil}, 3, 0, 0, false},
		{"longer than needed", map[string][]uint64{"a": {1, 2, 3, 4, 5}, "b": {1, 2, 3, 4, 5}}, 2, 0, 1, true},
		{"too short", map[string][]uint64{"a": {7, 8}, "b": {7, 8}}, 3, 0, 0, false},
		{"from a slot on", map[string][]uint64{"a": {33, 34, 35, 64, 65, 66}, "b": {33, 34, 35, 64, 65, 66}}, 3, 64, 64, true},
		{"a run across the from slot", map[string][]uint64{"a": {62, 63, 64, 65}, "b": {62, 63, 64, 65}}, 3, 64, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newAvailability([]string{"a", "b"})
			for node, slots := range tt.reports {
				for _, s := range slots {
					a.add(node, s)
				}
			}
			r, ok := a.run(tt.n, tt.from)
			assert.Equal(t, tt.wantOK, ok)
			if ok {
				assert.Equal(t, tt.wantFirst, r.First)
				assert.Equal(t, tt.wantFirst+uint64(tt.n)-1, r.Last)
			}
		})
	}
}

func TestAvailabilityLagging(t *testing.T) {
	a := newAvailability([]string{"a", "b", "c"})
	a.add("a", 40)
	a.add("b", 40)
	a.add("c", 39)
	newest, lag := a.lagging()
	assert.Equal(t, uint64(40), newest)
	assert.Equal(t, []string{"c"}, lag)
}

func TestWaitPayloadsBadInput(t *testing.T) {
	e := &Endpoints{Enclave: "x", Nodes: []EndpointNode{{CLService: "cl-1"}}}
	_, err := WaitPayloads(t.Context(), e, 0, 0, io.Discard)
	assert.ErrorContains(t, err, "0 slots: want at least 1")
	_, err = WaitPayloads(t.Context(), &Endpoints{Enclave: "x"}, 3, 0, io.Discard)
	assert.ErrorContains(t, err, `enclave "x" has no nodes`)
	_, err = WaitPayloads(t.Context(), e, 3, 0, io.Discard)
	assert.ErrorContains(t, err, "cl-1")
}
