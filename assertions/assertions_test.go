package assertions_test

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/segdiff/segdiff/assertions"
	"github.com/segdiff/segdiff/internal/devnet"
	"github.com/segdiff/segdiff/metrics/metricstest"
)

type S = assertions.Series

// node builds a record node from series values by slot (times as Unix
// seconds), as a scrape would give them.
func node(id, link string, builder bool, series map[S]map[uint64]float64) assertions.Node {
	byName := map[string]map[uint64]float64{}
	for s, v := range series {
		byName[string(s)] = v
	}
	return assertions.Node{ID: id, Link: link, Builder: builder, Slots: metricstest.Slots(byName)}
}

// net builds a network: builder "b0" revealing slots 10..13 at 100+slot
// seconds with a 1000-byte compressed payload, and receivers r1 (home),
// r2 (datacenter) completing delay[node] seconds after the reveal.
func testNet(mut func(map[string]map[S]map[uint64]float64)) assertions.Network {
	series := map[string]map[S]map[uint64]float64{"b0": {}, "r1": {}, "r2": {}}
	delay := map[string]float64{"r1": 0.5, "r2": 0.25}
	for slot := uint64(10); slot < 14; slot++ {
		at := 100 + float64(slot)
		set := func(node string, s S, v float64) {
			if series[node][s] == nil {
				series[node][s] = map[uint64]float64{}
			}
			series[node][s][slot] = v
		}
		set("b0", assertions.SeriesReveal, at)
		set("b0", assertions.SeriesPayloadSize, 1000)
		for _, node := range []string{"b0", "r1", "r2"} {
			set(node, assertions.SeriesBlockArrival, at-1)
			set(node, assertions.SeriesBlockInstalled, at-1+0.01*float64(len(node)+int(slot-10)))
		}
		for _, r := range []string{"r1", "r2"} {
			set(r, assertions.SeriesCompleted, at+delay[r]*float64(slot-9))
			set(r, assertions.SeriesDataBytes, 1500)
			set(r, assertions.SeriesControlBytes, 100*float64(slot-9))
		}
	}
	if mut != nil {
		mut(series)
	}
	return assertions.Network{Nodes: []assertions.Node{
		node("b0", "datacenter", true, series["b0"]),
		node("r2", "datacenter", false, series["r2"]),
		node("r1", "home", false, series["r1"]),
	}}
}

func TestWarmSlots(t *testing.T) {
	tests := []struct {
		name    string
		net     assertions.Network
		want    []uint64
		wantErr string
	}{
		{name: "drops first reveal", net: testNet(nil), want: []uint64{11, 12, 13}},
		{name: "no nodes", net: assertions.Network{}, wantErr: "no nodes"},
		{name: "no builder", net: assertions.Network{Nodes: []assertions.Node{{ID: "r1"}}}, wantErr: "no node holds the builder role"},
		{name: "one reveal is all cold", net: testNet(func(m map[string]map[S]map[uint64]float64) {
			m["b0"][assertions.SeriesReveal] = map[uint64]float64{10: 1}
		}), wantErr: "payload_diffusion_reveal_timestamp_seconds holds 1 slots"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := assertions.WarmSlots(tc.net)
			checkErr(t, err, tc.wantErr)
			if tc.wantErr == "" && !equalSlots(got, tc.want) {
				t.Fatalf("WarmSlots = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestSelfBuildingProposers: without a builder node each slot's proposer
// reveals its own payload; it is a receiver of every other slot and not of
// its own, so completion, copies and the pairs count skip exactly those.
func TestSelfBuildingProposers(t *testing.T) {
	series := map[string]map[S]map[uint64]float64{"p0": {}, "p1": {}, "p2": {}}
	set := func(node string, s S, slot uint64, v float64) {
		if series[node][s] == nil {
			series[node][s] = map[uint64]float64{}
		}
		series[node][s][slot] = v
	}
	for slot := uint64(10); slot < 14; slot++ {
		at := 100 + float64(slot)
		builder := fmt.Sprintf("p%d", slot%3)
		set(builder, assertions.SeriesReveal, slot, at)
		set(builder, assertions.SeriesPayloadSize, slot, 1000)
		for _, n := range []string{"p0", "p1", "p2"} {
			if n != builder { // a proposer holds its own payload before the reveal
				set(n, assertions.SeriesCompleted, slot, at+0.5)
				set(n, assertions.SeriesDataBytes, slot, 2000)
			}
		}
	}
	net := assertions.Network{Nodes: []assertions.Node{
		node("p0", "home", false, series["p0"]), node("p1", "home", false, series["p1"]), node("p2", "home", false, series["p2"]),
	}}
	warm, err := assertions.WarmSlots(net)
	if err != nil || !equalSlots(warm, []uint64{11, 12, 13}) {
		t.Fatalf("WarmSlots = %v, %v; want 11-13", warm, err)
	}
	done, err := assertions.Completion(net, warm)
	if err != nil {
		t.Fatalf("Completion: %v (a proposer's own slot counted as missing?)", err)
	}
	if len(done) != 6 {
		t.Errorf("%d completion samples, want 6 (3 slots x 2 receivers each)", len(done))
	}
	for _, d := range done {
		if d.Node == fmt.Sprintf("p%d", d.Slot%3) {
			t.Errorf("sample of %s for its own slot %d", d.Node, d.Slot)
		}
	}
	copies, err := assertions.Copies(net, warm, assertions.CopiesDataOverSlot)
	if err != nil || len(copies) != 6 {
		t.Errorf("Copies: %d samples, %v; want 6", len(copies), err)
	}
	if got := net.ReceivingPairs(warm); got != 6 {
		t.Errorf("ReceivingPairs = %d, want 6", got)
	}
}

func TestExtraction(t *testing.T) {
	warm := []uint64{11, 12, 13}
	tests := []struct {
		name    string
		extract func(assertions.Network, []uint64) ([]assertions.Sample, error)
		net     assertions.Network
		slots   []uint64
		wantN   int
		wantMax float64
		wantErr string
	}{
		{name: "completion", extract: assertions.Completion, net: testNet(nil), slots: warm, wantN: 6, wantMax: 2.0},
		{name: "copies", extract: copiesOverSlot, net: testNet(nil), slots: warm, wantN: 6, wantMax: 1.9},
		{name: "install delay includes builder", extract: assertions.InstallDelay, net: testNet(nil), slots: warm, wantN: 9, wantMax: 0.05},
		{name: "no slots", extract: assertions.Completion, net: testNet(nil), slots: nil, wantErr: "no slots selected"},
		{name: "only builders", extract: assertions.Completion, net: assertions.Network{Nodes: []assertions.Node{{ID: "b0", Builder: true}}}, slots: warm, wantErr: "no receiving"},
		{name: "node lacks completed series", extract: assertions.Completion, slots: warm,
			net:     testNet(func(m map[string]map[S]map[uint64]float64) { delete(m["r2"], assertions.SeriesCompleted) }),
			wantErr: "3 missing readings; node r2: series payload_diffusion_completed_timestamp_seconds missing (wanted slots 11, 12, 13)"},
		{name: "node lacks one slot", extract: assertions.Completion, slots: warm,
			net:     testNet(func(m map[string]map[S]map[uint64]float64) { delete(m["r1"][assertions.SeriesCompleted], 12) }),
			wantErr: "1 nodes never completed (1 node-slots); node r1 never completed slot 12"},
		{name: "builder lacks payload size", extract: copiesOverSlot, slots: warm,
			net:     testNet(func(m map[string]map[S]map[uint64]float64) { delete(m["b0"][assertions.SeriesPayloadSize], 13) }),
			wantErr: `node b0: series payload_diffusion_payload_size_bytes{encoding="compressed"} has no value for slot 13`},
		{name: "control bytes missing", extract: copiesOverSlot, slots: warm,
			net:     testNet(func(m map[string]map[S]map[uint64]float64) { delete(m["r1"], assertions.SeriesControlBytes) }),
			wantErr: `node r1: series payload_diffusion_received_bytes{kind="control"} missing`},
		{name: "install arrival missing", extract: assertions.InstallDelay, slots: warm,
			net:     testNet(func(m map[string]map[S]map[uint64]float64) { delete(m["b0"], assertions.SeriesBlockArrival) }),
			wantErr: "node b0: series payload_diffusion_block_arrival_timestamp_seconds missing"},
		{name: "slot without reveal", extract: assertions.Completion, slots: []uint64{99}, net: testNet(nil),
			wantErr: "series payload_diffusion_reveal_timestamp_seconds has no value for slot 99"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.extract(tc.net, tc.slots)
			checkErr(t, err, tc.wantErr)
			if tc.wantErr != "" {
				return
			}
			if len(got) != tc.wantN {
				t.Fatalf("got %d samples, want %d: %+v", len(got), tc.wantN, got)
			}
			var max float64
			for _, s := range got {
				max = math.Max(max, s.Value)
			}
			if math.Abs(max-tc.wantMax) > 1e-9 {
				t.Fatalf("max sample = %v, want %v", max, tc.wantMax)
			}
		})
	}
}

func TestVerdicts(t *testing.T) {
	samples, err := assertions.Completion(testNet(nil), []uint64{11, 12, 13})
	if err != nil {
		t.Fatal(err)
	}
	// r1: 1.0, 1.5, 2.0; r2: 0.5, 0.75, 1.0 → sorted 0.5 .75 1 1 1.5 2; nearest-rank median = 3rd = 1
	tests := []struct {
		name         string
		verdict      assertions.Verdict
		wantPass     bool
		wantMeasured float64
		wantWorst    string // first offender node
		wantText     []string
	}{
		{name: "all within 3s", verdict: assertions.AllAtMost("completion", assertions.UnitSeconds, samples, 3), wantPass: true, wantMeasured: 2, wantWorst: "r1"},
		{name: "all within 1.5s fails", verdict: assertions.AllAtMost("completion", assertions.UnitSeconds, samples, 1.5), wantMeasured: 2, wantWorst: "r1",
			wantText: []string{"completion = 2s, budget <= 1.5s: FAILED", "worst: r1 (home) 2s at slot 13, r2 (datacenter) 1s at slot 13"}},
		{name: "median within 1s", verdict: assertions.QuantileAtMost("median", assertions.UnitSeconds, samples, 0.5, 1), wantPass: true, wantMeasured: 1},
		{name: "median over 10ms", verdict: assertions.QuantileAtMost("median", assertions.UnitSeconds, samples, 0.5, 0.01), wantMeasured: 1,
			wantText: []string{"median = 1s, budget <= 10ms: FAILED", "r1 (home) 2s"}},
		{name: "share within 1s", verdict: assertions.ShareAtLeast("share", samples, 1, 0.6), wantPass: true, wantMeasured: 4.0 / 6},
		{name: "share within 1s at 90%", verdict: assertions.ShareAtLeast("share", samples, 1, 0.9), wantMeasured: 4.0 / 6, wantText: []string{"share = 66.7%, budget >= 90.0%", "worst: r1 (home) 2s"}},
		{name: "no samples fails", verdict: assertions.AllAtMost("completion", assertions.UnitSeconds, nil, 3), wantText: []string{"no samples"}},
		{name: "speedup", verdict: assertions.SpeedupAtLeast("speedup", scale(samples, 4), samples, 0.5, 3), wantPass: true, wantMeasured: 4},
		{name: "speedup too small", verdict: assertions.SpeedupAtLeast("speedup", scale(samples, 2), samples, 0.5, 3), wantMeasured: 2, wantText: []string{"speedup = 2.00x, budget >= 3.00x: FAILED", "worst: r1 (home) 2s at slot 13"}},
		{name: "speedup empty", verdict: assertions.SpeedupAtLeast("speedup", nil, samples, 0.5, 3), wantText: []string{"no samples"}},
		{name: "copies ratio", verdict: assertions.RatioAtMost("ratio", assertions.UnitCopies, samples, scale(samples, 2), 0.5, 0.9), wantPass: true, wantMeasured: 0.5},
		{name: "copies ratio too high", verdict: assertions.RatioAtMost("ratio", assertions.UnitCopies, scale(samples, 2), samples, 0.5, 0.9), wantMeasured: 2,
			wantText: []string{"ratio = 2.00x, budget <= 0.90x: FAILED"}},
		{name: "copies ratio empty", verdict: assertions.RatioAtMost("ratio", assertions.UnitCopies, samples, nil, 0.5, 0.9), wantText: []string{"no samples"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := tc.verdict
			if v.Pass != tc.wantPass {
				t.Fatalf("Pass = %v, want %v: %s", v.Pass, tc.wantPass, v)
			}
			if (v.Err() == nil) != tc.wantPass {
				t.Fatalf("Err() = %v with Pass %v", v.Err(), v.Pass)
			}
			if math.Abs(v.Measured-tc.wantMeasured) > 1e-9 {
				t.Fatalf("Measured = %v, want %v", v.Measured, tc.wantMeasured)
			}
			if tc.wantWorst != "" && (len(v.Worst) == 0 || v.Worst[0].Node != tc.wantWorst) {
				t.Fatalf("Worst = %+v, want first %s", v.Worst, tc.wantWorst)
			}
			for _, w := range tc.wantText {
				if !strings.Contains(v.String(), w) {
					t.Fatalf("verdict %q lacks %q", v.String(), w)
				}
			}
		})
	}
}

func TestPTCTimely(t *testing.T) {
	vote := func(slot uint64, present int) devnet.PTCVotes {
		return devnet.PTCVotes{Slot: slot, Size: 512, PayloadPresent: present, Source: "test"}
	}
	tests := []struct {
		name         string
		slots        []uint64
		votes        map[uint64]devnet.PTCVotes
		wantPass     bool
		wantMeasured float64
		wantText     string
		wantNote     string
	}{
		{name: "small network names its members", slots: []uint64{5},
			votes:        map[uint64]devnet.PTCVotes{5: {Slot: 5, Size: 512, PayloadPresent: 239, Voters: 11, Members: 24, Source: "test"}},
			wantMeasured: 239, wantText: "= 239 votes, budget > 256 votes: FAILED",
			wantNote: "in slot 5, 11 of the committee's 24 members voted, holding 239 of its 512 positions"},
		{name: "all timely", slots: []uint64{1, 2}, votes: map[uint64]devnet.PTCVotes{1: vote(1, 400), 2: vote(2, 257)}, wantPass: true, wantMeasured: 257},
		{name: "exactly half is not timely", slots: []uint64{1, 2}, votes: map[uint64]devnet.PTCVotes{1: vote(1, 400), 2: vote(2, 256)},
			wantMeasured: 256, wantText: "= 256 votes, budget > 256 votes: FAILED"},
		{name: "missing slot", slots: []uint64{1, 3}, votes: map[uint64]devnet.PTCVotes{1: vote(1, 400)}, wantText: "no PTC votes for slots 3"},
		{name: "no slots", slots: nil, wantText: "no samples"},
		{name: "zero committee", slots: []uint64{1}, votes: map[uint64]devnet.PTCVotes{1: {Slot: 1}}, wantText: "committee size 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := assertions.PTCTimely(tc.slots, tc.votes)
			if v.Pass != tc.wantPass || v.Measured != tc.wantMeasured {
				t.Fatalf("got pass=%v measured=%v, want %v %v: %s", v.Pass, v.Measured, tc.wantPass, tc.wantMeasured, v)
			}
			if !strings.Contains(v.String(), tc.wantText) {
				t.Fatalf("verdict %q lacks %q", v.String(), tc.wantText)
			}
			if !strings.Contains(v.Note, tc.wantNote) || (tc.wantNote == "" && v.Note != "") {
				t.Errorf("note %q, want %q", v.Note, tc.wantNote)
			}
		})
	}
}

func TestUnitFormat(t *testing.T) {
	tests := []struct {
		u    assertions.Unit
		v    float64
		want string
	}{
		{assertions.UnitSeconds, 0.73, "730ms"},
		{assertions.UnitSeconds, 4.9, "4.9s"},
		{assertions.UnitCopies, 1.4, "1.40 copies"},
		{assertions.UnitShare, 0.955, "95.5%"},
		{assertions.UnitRatio, 6.7123, "6.71x"},
		{assertions.UnitVotes, 257, "257 votes"},
	}
	for _, tc := range tests {
		if got := tc.u.Format(tc.v); got != tc.want {
			t.Errorf("%s.Format(%v) = %q, want %q", tc.u, tc.v, got, tc.want)
		}
	}
}

func scale(in []assertions.Sample, f float64) []assertions.Sample {
	out := append([]assertions.Sample(nil), in...)
	for i := range out {
		out[i].Value *= f
	}
	return out
}

func equalSlots(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error = %v, want it to contain %q", err, want)
	}
}

func copiesOverSlot(n assertions.Network, slots []uint64) ([]assertions.Sample, error) {
	return assertions.Copies(n, slots, assertions.CopiesOverSlot)
}

// A node that never completes a slot it exports other readings for is
// reported as stranded, with the parts it held; adversarial nodes are not
// receivers.
func TestStrandedNodeNamedWithPartsHeld(t *testing.T) {
	builder := node("b", "", true, map[S]map[uint64]float64{
		assertions.SeriesReveal:   {1: 100, 2: 112},
		assertions.SeriesSegments: {1: 32, 2: 32},
	})
	done := node("r1", "", false, map[S]map[uint64]float64{
		assertions.SeriesCompleted: {2: 112.5}, assertions.SeriesSegmentsRecv: {2: 32}})
	stranded := node("r2", "", false, map[S]map[uint64]float64{
		assertions.SeriesCompleted: {1: 100.5}, assertions.SeriesSegmentsRecv: {2: 28}})
	withholder := assertions.Node{ID: "w", Role: "withholder"}
	net := assertions.Network{Nodes: []assertions.Node{builder, done, stranded, withholder}}
	if got := len(net.Receivers()); got != 2 {
		t.Fatalf("%d receivers, want the two honest non-builders", got)
	}
	_, err := assertions.Completion(net, []uint64{2})
	// A node that completed no slot at all exports no completion series,
	// yet received parts: it is stranded too, not a metrics gap.
	never := node("r3", "", false, map[S]map[uint64]float64{
		assertions.SeriesSegmentsRecv: {2: 19}})
	_, err3 := assertions.Completion(assertions.Network{Nodes: []assertions.Node{builder, never}}, []uint64{2})
	if want := "node r3 never completed slot 2 (holding 19 of 32 parts)"; err3 == nil || !strings.Contains(err3.Error(), want) {
		t.Errorf("Completion error = %v, want it to contain %q", err3, want)
	}
	want := "completion from reveal: 1 nodes never completed (1 node-slots); node r2 never completed slot 2 (holding 28 of 32 parts)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Completion error = %v, want it to contain %q", err, want)
	}
}

// summaryNet is a builder b0 revealing slots 2 and 3 (1000-byte compressed
// payloads) and receivers completing ms[node][slot] milliseconds after the
// reveal (-1: never), each receiving copies×900 data and copies×100
// control bytes; by network completion one copy fewer where every node
// completed.
func summaryNet(ms map[string][2]int, copies [2]float64) assertions.Network {
	b := map[S]map[uint64]float64{assertions.SeriesReveal: {2: 100, 3: 112}, assertions.SeriesPayloadSize: {2: 1000, 3: 1000}}
	net := assertions.Network{Nodes: []assertions.Node{node("b0", "home", true, b)},
		PTC: map[uint64]devnet.PTCVotes{2: {Slot: 2, Size: 512, PayloadPresent: 300}, 3: {Slot: 3, Size: 512, PayloadPresent: 200}}}
	all := map[uint64]bool{2: true, 3: true}
	for _, times := range ms {
		for i, m := range times {
			all[uint64(i+2)] = all[uint64(i+2)] && m >= 0
		}
	}
	for _, id := range slices.Sorted(maps.Keys(ms)) {
		series := map[S]map[uint64]float64{assertions.SeriesCompleted: {}, assertions.SeriesDataBytes: {}, assertions.SeriesControlBytes: {},
			assertions.SeriesNetDataBytes: {}, assertions.SeriesNetControlBytes: {}}
		for i, m := range ms[id] {
			slot := uint64(i + 2)
			if m >= 0 {
				series[assertions.SeriesCompleted][slot] = b[assertions.SeriesReveal][slot] + float64(m)/1000
			}
			series[assertions.SeriesDataBytes][slot] = copies[i] * 900
			series[assertions.SeriesControlBytes][slot] = copies[i] * 100
			if all[slot] {
				series[assertions.SeriesNetDataBytes][slot] = (copies[i] - 1) * 900
				series[assertions.SeriesNetControlBytes][slot] = (copies[i] - 1) * 100
			}
		}
		net.Nodes = append(net.Nodes, node(id, "home", false, series))
	}
	return net
}

// Summaries pool receivers × slots with nearest-rank quantiles, as the
// checks do; the builder is not a receiver; a node that never completed is
// never, not a number; each copies definition is its own figure.
func TestSummarize(t *testing.T) {
	net := summaryNet(map[string][2]int{"r1": {100, 500}, "r2": {200, 600}, "r3": {300, 700}, "r4": {400, 4000}}, [2]float64{2, 4})
	s, err := assertions.Summarize(net, []uint64{2, 3}, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if s.Slots != 2 || s.Receivers != 4 || s.P50 != 400*time.Millisecond || s.P90 != 4*time.Second || s.Max != 4*time.Second {
		t.Errorf("p50 %v p90 %v max %v over %d slots of %d receivers; want 400ms, 4s (rank 8 of 8), 4s over 2 of 4", s.P50, s.P90, s.Max, s.Slots, s.Receivers)
	}
	if s.Within != 7.0/8 || s.Stranded != 0 {
		t.Errorf("within = %v, stranded %d; want 7/8, 0", s.Within, s.Stranded)
	}
	if s.OverSlot.Mean != 3 || s.OverSlot.Median != 2 || s.DataOverSlot != 2.7 {
		t.Errorf("copies over the slot mean %v median %v, data %v; want 3, 2, 2.7", s.OverSlot.Mean, s.OverSlot.Median, s.DataOverSlot)
	}
	if s.ByNetworkCompletion.Mean != 2 || s.ByNetworkCompletion.Median != 1 || s.ByNetworkCompletion.Samples != 8 {
		t.Errorf("copies by network completion %+v; want mean 2, median 1 over 8", s.ByNetworkCompletion)
	}
	if s.PTCTimely != 1 || s.PTCSlots != 2 {
		t.Errorf("PTC timely %d of %d, want 1 of 2", s.PTCTimely, s.PTCSlots)
	}
	never, err := assertions.Summarize(summaryNet(map[string][2]int{"r1": {100, 0}, "r2": {-1, 0}, "r3": {-1, 0}, "r4": {-1, 0}}, [2]float64{1, 1}), []uint64{2}, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if never.P50 != -1 || never.Max != -1 || never.Within != 0.25 || never.Stranded != 3 {
		t.Errorf("with three nodes never complete: p50 %v max %v within %v stranded %d", never.P50, never.Max, never.Within, never.Stranded)
	}
	if !math.IsNaN(float64(never.ByNetworkCompletion.Mean)) || never.OverSlot.Mean != 1 {
		t.Errorf("a slot some node never completed has no network-completion bytes: %+v, over the slot %+v", never.ByNetworkCompletion, never.OverSlot)
	}
	// A node stranded with nothing of a slot has no byte readings for it:
	// it received none, so its copies read 0 and the summary stands. A node
	// that completed the slot without byte readings is a metrics gap.
	b := map[S]map[uint64]float64{assertions.SeriesReveal: {2: 100, 3: 112}, assertions.SeriesPayloadSize: {2: 1000, 3: 1000}}
	fed := map[S]map[uint64]float64{assertions.SeriesCompleted: {2: 100.5, 3: 112.5},
		assertions.SeriesDataBytes: {2: 1800, 3: 2700}, assertions.SeriesControlBytes: {2: 200, 3: 300}}
	starved := map[S]map[uint64]float64{assertions.SeriesCompleted: {2: 100.7},
		assertions.SeriesDataBytes: {2: 900}, assertions.SeriesControlBytes: {2: 100}}
	empty := assertions.Network{Nodes: []assertions.Node{node("b0", "home", true, b), node("r1", "home", false, fed), node("r2", "home", false, starved)}}
	got, err := assertions.Summarize(empty, []uint64{3}, 3*time.Second)
	if err != nil {
		t.Fatalf("summary with a node that received nothing of a slot: %v", err)
	}
	if got.Stranded != 1 || got.OverSlot.Samples != 2 || got.OverSlot.Mean != 1.5 || got.DataOverSlot != 1.35 {
		t.Errorf("a node that received nothing: stranded %d, copies over the slot %+v, data %v; want 1, mean 1.5 over 2, 1.35", got.Stranded, got.OverSlot, got.DataOverSlot)
	}
	starved[assertions.SeriesCompleted][3] = 112.9
	if _, err := assertions.Summarize(assertions.Network{Nodes: []assertions.Node{node("b0", "home", true, b), node("r2", "home", false, starved)}}, []uint64{3}, 3*time.Second); err == nil ||
		!strings.Contains(err.Error(), `node r2: series payload_diffusion_received_bytes{kind="data"} has no value for slot 3`) {
		t.Errorf("a node that completed a slot without its bytes: %v", err)
	}
	// A metrics gap is not a stranded node: the summary refuses it.
	gap := summaryNet(map[string][2]int{"r1": {100, 500}}, [2]float64{2, 2})
	gap.Nodes = append(gap.Nodes, assertions.Node{ID: "r9"})
	if _, err := assertions.Summarize(gap, []uint64{2, 3}, 3*time.Second); err == nil || !strings.Contains(err.Error(), "node r9: series payload_diffusion_completed_timestamp_seconds missing") {
		t.Errorf("summary of a node without metrics: %v", err)
	}
}
