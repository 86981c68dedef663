package metrics_test

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/segdiff/segdiff/assertions"
	"github.com/segdiff/segdiff/metrics"
)

// epoch is where the embedded devnet's virtual clock starts.
var epoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

func newRecorder(t *testing.T, opts ...metrics.Option) (*metrics.Recorder, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	opts = append([]metrics.Option{metrics.WithInfo(metrics.ModeSegmented, "segdiff/1", "embedded")}, opts...)
	r, err := metrics.NewRecorder(reg, opts...)
	require.NoError(t, err)
	return r, reg
}

// slotStart is a 12 s slot clock on the virtual epoch.
func slotStart(slot uint64) time.Time { return epoch.Add(time.Duration(slot) * 12 * time.Second) }

// populate records every event of slot, builder side included.
func populate(r *metrics.Recorder, slot uint64) {
	s := slotStart(slot)
	r.BlockArrived(slot, s.Add(350*time.Millisecond))
	r.BlockInstalled(slot, s.Add(420*time.Millisecond))
	r.Revealed(slot, s.Add(6*time.Second), 1<<20, 746_000, 32)
	r.FirstArrival(slot, s.Add(6*time.Second+41*time.Millisecond))
	for i := 0; i < 32; i++ {
		r.SegmentReceived(slot, false)
		r.AddReceivedBytes(slot, metrics.KindData, 23_312)
	}
	r.SegmentReceived(slot, true)
	r.AddReceivedBytes(slot, metrics.KindData, 23_312)
	r.AddReceivedBytes(slot, metrics.KindControl, 1_234)
	r.Completed(slot, s.Add(6*time.Second+733*time.Millisecond))
	r.ReceivedBytesByNetworkCompletion(slot)
	r.AddReceivedBytes(slot, metrics.KindData, 23_312) // a late duplicate
}

func gatherText(t *testing.T, g prometheus.Gatherer) []byte {
	t.Helper()
	mfs, err := g.Gather()
	require.NoError(t, err)
	var buf bytes.Buffer
	for _, mf := range mfs {
		_, err := expfmt.MetricFamilyToText(&buf, mf)
		require.NoError(t, err)
	}
	return buf.Bytes()
}

func TestNewRecorder(t *testing.T) {
	info := metrics.WithInfo(metrics.ModeWhole, "segdiff/1", "prysm")
	tests := []struct {
		name    string
		reg     prometheus.Registerer
		opts    []metrics.Option
		wantErr string
	}{
		{name: "ok", reg: prometheus.NewRegistry(), opts: []metrics.Option{info}},
		{name: "ok retained", reg: prometheus.NewRegistry(), opts: []metrics.Option{info, metrics.WithRetainedSlots(1)}},
		{name: "nil registerer", opts: []metrics.Option{info}, wantErr: "nil registerer"},
		{name: "no info", reg: prometheus.NewRegistry(), wantErr: "no info specified"},
		{name: "bad mode", reg: prometheus.NewRegistry(), opts: []metrics.Option{metrics.WithInfo("gossip", "f", "c")}, wantErr: `info mode "gossip"`},
		{name: "empty format", reg: prometheus.NewRegistry(), opts: []metrics.Option{metrics.WithInfo(metrics.ModeWhole, "", "c")}, wantErr: "info format: empty"},
		{name: "empty client", reg: prometheus.NewRegistry(), opts: []metrics.Option{metrics.WithInfo(metrics.ModeWhole, "f", "")}, wantErr: "info client: empty"},
		{name: "zero retained", reg: prometheus.NewRegistry(), opts: []metrics.Option{info, metrics.WithRetainedSlots(0)}, wantErr: "retained slots 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := metrics.NewRecorder(tt.reg, tt.opts...)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				assert.Nil(t, r)
				return
			}
			require.NoError(t, err)
			assert.NotNil(t, r)
		})
	}
}

func TestNewRecorderTwiceOnOneRegistry(t *testing.T) {
	_, reg := newRecorder(t)
	_, err := metrics.NewRecorder(reg, metrics.WithInfo(metrics.ModeWhole, "segdiff/1", "x"))
	require.ErrorContains(t, err, "register "+metrics.NameInfo)
	// The failed attempt must not leave half its collectors behind.
	n, err := testutil.GatherAndCount(reg, metrics.NameInfo)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
}

func TestRecorderExportsEveryContractSeries(t *testing.T) {
	r, reg := newRecorder(t)
	populate(r, 7)
	r.SegmentRejected(metrics.ReasonProof)
	r.SegmentDeferred()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	got := map[string]string{}
	for _, mf := range mfs {
		got[mf.GetName()] = strings.ToLower(mf.GetType().String())
	}
	for _, d := range metrics.Definitions {
		assert.Equal(t, string(d.Type), got[d.Name], "series %s", d.Name)
	}
	assert.Len(t, got, len(metrics.Definitions))
}

func TestRecorderLint(t *testing.T) {
	r, reg := newRecorder(t)
	populate(r, 7)
	r.SegmentRejected(metrics.ReasonDecode)
	r.SegmentDeferred()
	n, err := testutil.GatherAndCount(reg)
	require.NoError(t, err)
	require.Greater(t, n, len(metrics.Definitions), "lint needs every series populated")
	problems, err := testutil.GatherAndLint(reg)
	require.NoError(t, err)
	assert.Empty(t, problems)
}

func TestRecorderRoundTrip(t *testing.T) {
	r, reg := newRecorder(t)
	for slot := uint64(5); slot < 8; slot++ {
		populate(r, slot)
	}
	r.BlockArrived(8, slotStart(8).Add(time.Second+1*time.Millisecond)) // partial slot
	r.SegmentRejected(metrics.ReasonProof)
	r.SegmentRejected(metrics.ReasonProof)
	r.SegmentRejected(metrics.ReasonInstallTimeout)
	r.SegmentDeferred()

	snap, err := metrics.Parse(bytes.NewReader(gatherText(t, reg)), "node-1")
	require.NoError(t, err)

	assert.Equal(t, metrics.Info{Mode: metrics.ModeSegmented, Format: "segdiff/1", Client: "embedded", Present: true}, snap.Info)
	assert.Equal(t, []uint64{5, 6, 7, 8}, snap.SlotNumbers())
	s := snap.Slot(6)
	require.NotNil(t, s)
	start := slotStart(6)
	assert.Equal(t, start.Add(350*time.Millisecond), s.BlockArrival)
	assert.Equal(t, start.Add(420*time.Millisecond), s.BlockInstalled)
	assert.Equal(t, start.Add(6*time.Second), s.Reveal)
	assert.Equal(t, start.Add(6*time.Second+41*time.Millisecond), s.FirstArrival)
	assert.Equal(t, start.Add(6*time.Second+733*time.Millisecond), s.Completed)
	assert.EqualValues(t, 34*23_312, s.DataBytes)
	assert.EqualValues(t, 1_234, s.ControlBytes)
	assert.EqualValues(t, 32, s.Segments)
	assert.EqualValues(t, 1, s.Duplicates)
	assert.EqualValues(t, 1<<20, s.RawSize)
	assert.EqualValues(t, 746_000, s.CompressedSize)
	assert.EqualValues(t, 32, s.SegmentCount)
	d, ok := s.InstallDelay()
	assert.True(t, ok)
	assert.Equal(t, 70*time.Millisecond, d)
	c, ok := s.CompletionFrom(s.Reveal)
	assert.True(t, ok)
	assert.Equal(t, 733*time.Millisecond, c)
	// Copies by each definition, as the suite reads them (package
	// assertions holds the one definition): this one node's snapshot
	// stands for the builder, which reports the compressed size, and for
	// a receiver, whose bytes are counted.
	net := assertions.Network{Nodes: []assertions.Node{{ID: "builder", Builder: true, Slots: snap.Slots}, {ID: "node-1", Slots: snap.Slots}}}
	for def, want := range map[assertions.CopiesDefinition]float64{
		assertions.CopiesOverSlot:            float64(34*23_312+1_234) / 746_000,
		assertions.CopiesByNetworkCompletion: float64(33*23_312+1_234) / 746_000,
	} {
		copies, err := assertions.Copies(net, []uint64{6}, def)
		require.NoError(t, err, def.String())
		require.Len(t, copies, 1, def.String())
		assert.InDelta(t, want, copies[0].Value, 1e-12, def.String())
	}
	for _, def := range metrics.Definitions {
		if def.PerSlot() {
			assert.True(t, s.Has(def.Name), def.Name)
		} else {
			assert.True(t, snap.Has(def.Name), def.Name)
		}
	}

	partial := snap.Slot(8)
	require.NotNil(t, partial)
	assert.True(t, partial.Has(metrics.NameBlockArrivalTimestamp))
	assert.False(t, partial.Has(metrics.NameCompletedTimestamp))
	assert.True(t, partial.Completed.IsZero())
	_, ok = partial.InstallDelay()
	assert.False(t, ok)

	assert.EqualValues(t, 3*(34*23_312)+0, snap.Totals.DataBytes)
	assert.EqualValues(t, 3*1_234, snap.Totals.ControlBytes)
	assert.Equal(t, map[string]uint64{
		metrics.ReasonIndexRange: 0, metrics.ReasonSize: 0, metrics.ReasonProof: 2,
		metrics.ReasonGroupMismatch: 0, metrics.ReasonDecode: 0, metrics.ReasonInstallTimeout: 1,
	}, snap.Totals.Rejected)
	assert.EqualValues(t, 1, snap.Totals.Deferred)
	h := snap.Totals.InstallDelay
	assert.EqualValues(t, 3, h.Count)
	assert.InDelta(t, 3*0.070, h.Sum, 1e-9)
	require.Len(t, h.Buckets, len(metrics.InstallDelayBuckets))
	for i, b := range h.Buckets {
		assert.Equal(t, metrics.InstallDelayBuckets[i], b.UpperBound)
		want := uint64(0)
		if b.UpperBound >= 0.070 {
			want = 3
		}
		assert.Equal(t, want, b.Count, "bucket le=%v", b.UpperBound)
	}
}

func TestRecorderFirstCallCounts(t *testing.T) {
	r, reg := newRecorder(t)
	s := slotStart(3)
	r.BlockArrived(3, s.Add(time.Second))
	r.BlockArrived(3, s.Add(2*time.Second))
	r.BlockInstalled(3, s.Add(3*time.Second))
	r.BlockInstalled(3, s.Add(4*time.Second))
	r.FirstArrival(3, s.Add(5*time.Second))
	r.FirstArrival(3, s.Add(6*time.Second))
	r.Completed(3, s.Add(7*time.Second))
	r.Completed(3, s.Add(8*time.Second))
	r.Revealed(3, s.Add(9*time.Second), 10, 5, 1)
	r.Revealed(3, s.Add(10*time.Second), 20, 6, 2)
	r.BlockInstalled(4, s.Add(time.Hour)) // no arrival: no histogram observation
	r.BlockArrived(5, s.Add(time.Hour))
	r.BlockInstalled(5, s.Add(time.Minute)) // before arrival: no observation
	snap, err := metrics.Parse(bytes.NewReader(gatherText(t, reg)), "node")
	require.NoError(t, err)
	got := snap.Slot(3)
	assert.Equal(t, s.Add(time.Second), got.BlockArrival)
	assert.Equal(t, s.Add(3*time.Second), got.BlockInstalled)
	assert.Equal(t, s.Add(5*time.Second), got.FirstArrival)
	assert.Equal(t, s.Add(7*time.Second), got.Completed)
	assert.Equal(t, s.Add(9*time.Second), got.Reveal)
	assert.EqualValues(t, 10, got.RawSize)
	assert.EqualValues(t, 1, snap.Totals.InstallDelay.Count)
	assert.InDelta(t, 2.0, snap.Totals.InstallDelay.Sum, 1e-9)
}

func TestRecorderMillisecondPrecision(t *testing.T) {
	r, reg := newRecorder(t)
	at := epoch.Add(123*time.Millisecond + 999*time.Microsecond)
	r.Completed(1, at)
	snap, err := metrics.Parse(bytes.NewReader(gatherText(t, reg)), "node")
	require.NoError(t, err)
	assert.Equal(t, epoch.Add(123*time.Millisecond), snap.Slot(1).Completed)
	assert.Contains(t, string(gatherText(t, reg)), `payload_diffusion_completed_timestamp_seconds{slot="1"} 9.46684800123e+08`)
}

func TestRecorderRetention(t *testing.T) {
	const retained = 4
	r, reg := newRecorder(t, metrics.WithRetainedSlots(retained))
	for slot := uint64(1); slot <= 10; slot++ {
		populate(r, slot)
	}
	// An event for a slot already outside the window is dropped...
	r.Completed(2, slotStart(2))
	// ...but its bytes still count in the total, as unattributed ones do.
	r.AddReceivedBytes(2, metrics.KindControl, 5)
	r.AddUnattributedBytes(metrics.KindControl, 100)
	r.AddUnattributedBytes(metrics.KindControl, -3)

	snap, err := metrics.Parse(bytes.NewReader(gatherText(t, reg)), "node")
	require.NoError(t, err)
	assert.Equal(t, []uint64{7, 8, 9, 10}, snap.SlotNumbers())
	assert.EqualValues(t, 10*1_234+5+100, snap.Totals.ControlBytes)

	// Every per-slot series of a dropped slot is gone, not just some.
	n, err := testutil.GatherAndCount(reg, metrics.NamePayloadSize, metrics.NameReceivedBytes)
	require.NoError(t, err)
	assert.Equal(t, retained*2*2, n)

	// A slot inside the window but older than the newest is still accepted.
	r.SegmentReceived(7, true)
	snap, err = metrics.Parse(bytes.NewReader(gatherText(t, reg)), "node")
	require.NoError(t, err)
	assert.EqualValues(t, 2, snap.Slot(7).Duplicates)

	// The exposition stays bounded however many slots pass.
	for slot := uint64(11); slot <= 200; slot++ {
		populate(r, slot)
	}
	n, err = testutil.GatherAndCount(reg)
	require.NoError(t, err)
	perSlot := 0
	for _, d := range metrics.Definitions {
		if d.PerSlot() {
			perSlot++
		}
	}
	// per-slot: 11 names, 3 of them with two series each; fixed: info 1,
	// histogram 1, bytes_total 2, rejected 6, deferred 1.
	assert.Equal(t, retained*(perSlot+3)+1+1+2+len(metrics.Reasons)+1, n)
}

func TestRecorderPanicsOnContractViolation(t *testing.T) {
	r, _ := newRecorder(t)
	assert.PanicsWithValue(t, `metrics: SegmentRejected with unknown reason "bad_proof" (want one of [index_range size proof group_mismatch decode install_timeout])`,
		func() { r.SegmentRejected("bad_proof") })
	assert.Panics(t, func() { r.AddReceivedBytes(1, metrics.Kind(9), 1) })
	assert.Panics(t, func() { r.AddUnattributedBytes(metrics.Kind(2), 1) })
}

func TestRecorderConcurrent(t *testing.T) {
	r, reg := newRecorder(t, metrics.WithRetainedSlots(8))
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Go(func() {
			for slot := uint64(1); slot <= 40; slot++ {
				populate(r, slot)
				r.SegmentRejected(metrics.ReasonSize)
				r.SegmentDeferred()
			}
		})
	}
	wg.Go(func() {
		for i := 0; i < 20; i++ {
			if _, err := reg.Gather(); err != nil {
				t.Error(err)
			}
		}
	})
	wg.Wait()
	snap, err := metrics.Parse(bytes.NewReader(gatherText(t, reg)), "node")
	require.NoError(t, err)
	assert.EqualValues(t, 8*40, snap.Totals.Deferred)
	assert.EqualValues(t, 8*40, snap.Totals.Rejected[metrics.ReasonSize])
	assert.EqualValues(t, 8*40*(34*23_312), snap.Totals.DataBytes)
	last := snap.Slot(40)
	require.NotNil(t, last, "slots %v", snap.SlotNumbers())
	assert.EqualValues(t, 8*32, last.Segments)
	assert.EqualValues(t, 8*34*23_312, last.DataBytes)
}

func TestKindString(t *testing.T) {
	assert.Equal(t, "data", metrics.KindData.String())
	assert.Equal(t, "control", metrics.KindControl.String())
	assert.Equal(t, "Kind(7)", fmt.Sprint(metrics.Kind(7)))
}
