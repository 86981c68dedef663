package metrics_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/segdiff/segdiff/metrics"
)

const good = `# HELP payload_diffusion_info x
# TYPE payload_diffusion_info gauge
payload_diffusion_info{client="prysm",format="segdiff/1",mode="whole"} 1
# TYPE payload_diffusion_completed_timestamp_seconds gauge
payload_diffusion_completed_timestamp_seconds{slot="12"} 9.466848e+08
# TYPE go_goroutines gauge
go_goroutines 12
`

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		wantErr error // sentinel, nil for a text-format error
		want    string
	}{
		{
			name:  "syntax",
			input: "payload_diffusion_info{mode=\"whole\" 1\n",
			want:  "parse metrics from node-3: text format parsing error in line 1",
		},
		{
			name:    "wrong type",
			input:   "# TYPE payload_diffusion_completed_timestamp_seconds counter\npayload_diffusion_completed_timestamp_seconds{slot=\"1\"} 1\n",
			wantErr: metrics.ErrWrongType,
			want:    "payload_diffusion_completed_timestamp_seconds: wrong metric type: declared counter, want gauge",
		},
		{
			name:    "untyped",
			input:   "payload_diffusion_segments_deferred_total 3\n",
			wantErr: metrics.ErrWrongType,
			want:    "declared untyped, want counter",
		},
		{
			name:    "bad slot label",
			input:   "# TYPE payload_diffusion_completed_timestamp_seconds gauge\npayload_diffusion_completed_timestamp_seconds{slot=\"twelve\"} 1\n",
			wantErr: metrics.ErrBadLabel,
			want:    `payload_diffusion_completed_timestamp_seconds{slot="twelve"}: bad label: slot "twelve" is not a decimal slot number`,
		},
		{
			name:    "non-canonical slot label",
			input:   "# TYPE payload_diffusion_completed_timestamp_seconds gauge\npayload_diffusion_completed_timestamp_seconds{slot=\"012\"} 1\n",
			wantErr: metrics.ErrBadLabel,
			want:    `slot "012" is not a decimal slot number`,
		},
		{
			name:    "negative slot label",
			input:   "# TYPE payload_diffusion_segments_received gauge\npayload_diffusion_segments_received{slot=\"-1\"} 1\n",
			wantErr: metrics.ErrBadLabel,
			want:    `slot "-1"`,
		},
		{
			name:    "no slot label",
			input:   "# TYPE payload_diffusion_completed_timestamp_seconds gauge\npayload_diffusion_completed_timestamp_seconds 1\n",
			wantErr: metrics.ErrBadLabel,
			want:    "payload_diffusion_completed_timestamp_seconds: bad label: no slot label",
		},
		{
			name:    "bad kind label",
			input:   "# TYPE payload_diffusion_received_bytes gauge\npayload_diffusion_received_bytes{slot=\"1\",kind=\"gossip\"} 1\n",
			wantErr: metrics.ErrBadLabel,
			want:    `payload_diffusion_received_bytes{slot="1",kind="gossip"}: bad label: kind "gossip", want data or control`,
		},
		{
			name:    "bad kind label on total",
			input:   "# TYPE payload_diffusion_received_bytes_total counter\npayload_diffusion_received_bytes_total 1\n",
			wantErr: metrics.ErrBadLabel,
			want:    `kind "", want data or control`,
		},
		{
			name:    "bad encoding label",
			input:   "# TYPE payload_diffusion_payload_size_bytes gauge\npayload_diffusion_payload_size_bytes{slot=\"1\",encoding=\"zstd\"} 1\n",
			wantErr: metrics.ErrBadLabel,
			want:    `encoding "zstd", want raw or compressed`,
		},
		{
			name:    "bad reason label",
			input:   "# TYPE payload_diffusion_segments_rejected_total counter\npayload_diffusion_segments_rejected_total{reason=\"other\"} 1\n",
			wantErr: metrics.ErrBadLabel,
			want:    `reason "other"`,
		},
		{
			name:    "bad mode",
			input:   "# TYPE payload_diffusion_info gauge\npayload_diffusion_info{mode=\"flood\",format=\"f\",client=\"c\"} 1\n",
			wantErr: metrics.ErrBadLabel,
			want:    `mode "flood"`,
		},
		{
			name:    "info not 1",
			input:   "# TYPE payload_diffusion_info gauge\npayload_diffusion_info{mode=\"whole\",format=\"f\",client=\"c\"} 2\n",
			wantErr: metrics.ErrBadValue,
			want:    "value 2, want 1",
		},
		{
			name:    "NaN",
			input:   "# TYPE payload_diffusion_completed_timestamp_seconds gauge\npayload_diffusion_completed_timestamp_seconds{slot=\"1\"} NaN\n",
			wantErr: metrics.ErrBadValue,
			want:    `payload_diffusion_completed_timestamp_seconds{slot="1"}: bad value: value NaN`,
		},
		{
			name:    "Inf",
			input:   "# TYPE payload_diffusion_segments_received gauge\npayload_diffusion_segments_received{slot=\"1\"} +Inf\n",
			wantErr: metrics.ErrBadValue,
			want:    "value +Inf",
		},
		{
			name:    "zero timestamp",
			input:   "# TYPE payload_diffusion_block_arrival_timestamp_seconds gauge\npayload_diffusion_block_arrival_timestamp_seconds{slot=\"1\"} 0\n",
			wantErr: metrics.ErrBadValue,
			want:    "timestamp 0 is not Unix seconds",
		},
		{
			name:    "millisecond timestamp",
			input:   "# TYPE payload_diffusion_block_arrival_timestamp_seconds gauge\npayload_diffusion_block_arrival_timestamp_seconds{slot=\"1\"} 1.7e12\n",
			wantErr: metrics.ErrBadValue,
			want:    "is not Unix seconds",
		},
		{
			name:    "fractional count",
			input:   "# TYPE payload_diffusion_received_bytes gauge\npayload_diffusion_received_bytes{slot=\"1\",kind=\"data\"} 1.5\n",
			wantErr: metrics.ErrBadValue,
			want:    "value 1.5 is not a count",
		},
		{
			name:    "negative count",
			input:   "# TYPE payload_diffusion_duplicate_segments gauge\npayload_diffusion_duplicate_segments{slot=\"1\"} -1\n",
			wantErr: metrics.ErrBadValue,
			want:    "value -1 is not a count",
		},
		{
			name:    "duplicate series",
			input:   "# TYPE payload_diffusion_completed_timestamp_seconds gauge\npayload_diffusion_completed_timestamp_seconds{slot=\"1\"} 1\npayload_diffusion_completed_timestamp_seconds{slot=\"1\"} 2\n",
			wantErr: metrics.ErrDuplicate,
			want:    `payload_diffusion_completed_timestamp_seconds{slot="1"}: duplicate series`,
		},
		{
			name:    "duplicate info",
			input:   "# TYPE payload_diffusion_info gauge\npayload_diffusion_info{mode=\"whole\",format=\"f\",client=\"a\"} 1\npayload_diffusion_info{mode=\"whole\",format=\"f\",client=\"b\"} 1\n",
			wantErr: metrics.ErrDuplicate,
			want:    "more than one info series",
		},
		{
			name:    "duplicate total",
			input:   "# TYPE payload_diffusion_received_bytes_total counter\npayload_diffusion_received_bytes_total{kind=\"data\",job=\"a\"} 1\npayload_diffusion_received_bytes_total{kind=\"data\",job=\"b\"} 1\n",
			wantErr: metrics.ErrDuplicate,
			want:    "seen twice",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap, err := metrics.Parse(strings.NewReader(tt.input), "node-3")
			require.Error(t, err)
			assert.Nil(t, snap)
			assert.True(t, strings.HasPrefix(err.Error(), "parse metrics from node-3: "), err.Error())
			assert.Contains(t, err.Error(), tt.want)
			if tt.wantErr != nil {
				assert.ErrorIs(t, err, tt.wantErr)
			}
		})
	}
}

func TestParseReportsEveryBadSeries(t *testing.T) {
	in := "# TYPE payload_diffusion_completed_timestamp_seconds gauge\n" +
		"payload_diffusion_completed_timestamp_seconds{slot=\"x\"} 1\n" +
		"payload_diffusion_completed_timestamp_seconds{slot=\"2\"} NaN\n"
	_, err := metrics.Parse(strings.NewReader(in), "n")
	require.Error(t, err)
	assert.ErrorIs(t, err, metrics.ErrBadLabel)
	assert.ErrorIs(t, err, metrics.ErrBadValue)
}

func TestParseIgnoresForeignAndListsUnknown(t *testing.T) {
	in := good + "# TYPE payload_diffusion_completed_timestamp gauge\npayload_diffusion_completed_timestamp{slot=\"12\"} 1\n"
	snap, err := metrics.Parse(strings.NewReader(in), "n")
	require.NoError(t, err)
	assert.Equal(t, []string{"payload_diffusion_completed_timestamp"}, snap.Unknown)
	assert.Equal(t, metrics.Info{Mode: "whole", Format: "segdiff/1", Client: "prysm", Present: true}, snap.Info)
	assert.Equal(t, time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), snap.Slot(12).Completed)
	assert.True(t, snap.Has(metrics.NameInfo))
	assert.False(t, snap.Has(metrics.NameSegmentsDeferredTotal))
}

func TestParseEmpty(t *testing.T) {
	snap, err := metrics.Parse(strings.NewReader(""), "n")
	require.NoError(t, err)
	assert.False(t, snap.Info.Present)
	assert.Empty(t, snap.Slots)
}

func TestRequire(t *testing.T) {
	in := good + "# TYPE payload_diffusion_received_bytes gauge\npayload_diffusion_received_bytes{slot=\"12\",kind=\"data\"} 5\n" +
		"# TYPE payload_diffusion_payload_segment_count gauge\npayload_diffusion_payload_segment_count{slot=\"12\"} 5\n"
	snap, err := metrics.Parse(strings.NewReader(in), "http://n1/metrics")
	require.NoError(t, err)
	tests := []struct {
		name  string
		slot  uint64
		names []string
		want  []string // substrings; nil for no error
	}{
		{name: "present", slot: 12, names: []string{metrics.NameCompletedTimestamp}},
		{name: "nothing required", slot: 99},
		{
			name: "missing kind", slot: 12, names: []string{metrics.NameCompletedTimestamp, metrics.NameReceivedBytes, metrics.NameRevealTimestamp},
			want: []string{
				`http://n1/metrics: missing series for slot 12: payload_diffusion_received_bytes{kind="control"}, payload_diffusion_reveal_timestamp_seconds`,
				"unknown series payload_diffusion_payload_segment_count",
			},
		},
		{
			name: "missing slot", slot: 13, names: []string{metrics.NameCompletedTimestamp},
			want: []string{"missing series for slot 13: payload_diffusion_completed_timestamp_seconds", "slots present: 12"},
		},
		{name: "not per-slot", slot: 12, names: []string{metrics.NameInfo}, want: []string{"require payload_diffusion_info: not a per-slot contract series"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := snap.Require(tt.slot, tt.names...)
			if tt.want == nil {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
	assert.ErrorIs(t, snap.Require(13, metrics.NameCompletedTimestamp), metrics.ErrMissing)
}

func TestFromSamples(t *testing.T) {
	samples := []metrics.Sample{
		{Name: metrics.NameInfo, Labels: map[string]string{"mode": "segmented", "format": "segdiff/1", "client": "prysm", "segdiff_node": "cl-1", "instance": "x"}, Value: 1},
		{Name: metrics.NameCompletedTimestamp, Labels: map[string]string{"slot": "4", "segdiff_node": "cl-1"}, Value: 946684800.5},
		{Name: metrics.NameBlockInstallDelay + "_bucket", Labels: map[string]string{"le": "0.1"}, Value: 2},
		{Name: metrics.NameBlockInstallDelay + "_bucket", Labels: map[string]string{"le": "0.05"}, Value: 1},
		{Name: metrics.NameBlockInstallDelay + "_bucket", Labels: map[string]string{"le": "+Inf"}, Value: 3},
		{Name: metrics.NameBlockInstallDelay + "_sum", Value: 0.5},
		{Name: metrics.NameBlockInstallDelay + "_count", Value: 3},
		{Name: "up", Value: 1},
	}
	snap, err := metrics.FromSamples("cl-1 via prometheus", samples)
	require.NoError(t, err)
	assert.Equal(t, "prysm", snap.Info.Client)
	assert.Equal(t, time.Date(2000, 1, 1, 0, 0, 0, 500e6, time.UTC), snap.Slot(4).Completed)
	assert.Equal(t, metrics.Histogram{Count: 3, Sum: 0.5, Buckets: []metrics.Bucket{{0.05, 1}, {0.1, 2}}}, snap.Totals.InstallDelay)

	_, err = metrics.FromSamples("cl-2 via prometheus", []metrics.Sample{
		{Name: metrics.NameBlockInstallDelay + "_bucket", Labels: map[string]string{"le": "soon"}, Value: 2},
	})
	require.ErrorIs(t, err, metrics.ErrBadLabel)
	assert.Contains(t, err.Error(), `parse metrics from cl-2 via prometheus: payload_diffusion_block_install_delay_seconds_bucket{le="soon"}: bad label`)
}

func TestCompare(t *testing.T) {
	reordered := `# TYPE payload_diffusion_completed_timestamp_seconds gauge
payload_diffusion_completed_timestamp_seconds{slot="12"} 9.466848e+08
# TYPE payload_diffusion_info gauge
payload_diffusion_info{mode="whole",client="prysm",format="segdiff/1"} 1
`
	require.NoError(t, metrics.Compare(strings.NewReader(good), strings.NewReader(reordered)))

	changed := strings.Replace(reordered, "9.466848e+08", "9.466849e+08", 1)
	err := metrics.Compare(strings.NewReader(good), strings.NewReader(changed))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `- payload_diffusion_completed_timestamp_seconds{slot="12"} 9.466849e+08`)
	assert.Contains(t, err.Error(), `+ payload_diffusion_completed_timestamp_seconds{slot="12"} 9.466848e+08`)

	// Restricted to info, the timestamp change does not matter.
	require.NoError(t, metrics.Compare(strings.NewReader(good), strings.NewReader(changed), metrics.NameInfo))

	err = metrics.Compare(strings.NewReader("garbage{"), strings.NewReader(good))
	assert.ErrorContains(t, err, "compare metrics: got: ")
}

// exposition is a populated Recorder's exposition after slots 1..last,
// keeping the default 64.
func exposition(tb testing.TB, last uint64) []byte {
	tb.Helper()
	reg := prometheus.NewRegistry()
	r, err := metrics.NewRecorder(reg, metrics.WithInfo(metrics.ModeSegmented, "segdiff/1", "embedded"))
	require.NoError(tb, err)
	for slot := uint64(1); slot <= last; slot++ {
		populate(r, slot)
	}
	var buf bytes.Buffer
	mfs, err := reg.Gather()
	require.NoError(tb, err)
	for _, mf := range mfs {
		_, err := expfmt.MetricFamilyToText(&buf, mf)
		require.NoError(tb, err)
	}
	return buf.Bytes()
}

func BenchmarkParse(b *testing.B) {
	in := exposition(b, 100)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		snap, err := metrics.Parse(bytes.NewReader(in), "bench")
		if err != nil {
			b.Fatal(err)
		}
		if len(snap.Slots) != 64 {
			b.Fatalf("parsed %d slots, want 64", len(snap.Slots))
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(good))
	f.Add(exposition(f, 1)) // small seeds mutate faster than a 64-slot one
	f.Add([]byte("# TYPE payload_diffusion_received_bytes gauge\npayload_diffusion_received_bytes{slot=\"1\",kind=\"data\"} 1.5\n"))
	f.Add([]byte("# TYPE payload_diffusion_block_install_delay_seconds histogram\npayload_diffusion_block_install_delay_seconds_bucket{le=\"0.1\"} 1\npayload_diffusion_block_install_delay_seconds_bucket{le=\"+Inf\"} 1\npayload_diffusion_block_install_delay_seconds_sum 0.05\npayload_diffusion_block_install_delay_seconds_count 1\n"))
	f.Add([]byte(topicBytes))
	f.Fuzz(func(t *testing.T, in []byte) {
		snap, err := metrics.Parse(bytes.NewReader(in), "fuzz")
		if err != nil {
			if snap != nil {
				t.Fatal("non-nil snapshot with error")
			}
			if !strings.HasPrefix(err.Error(), "parse metrics from fuzz: ") {
				t.Fatalf("error without source: %v", err)
			}
			return
		}
		if snap.TopicBytes > 0 && !snap.HasTopicBytes {
			t.Fatalf("topic bytes %d without the series", snap.TopicBytes)
		}
		for n, s := range snap.Slots {
			if s.Number != n {
				t.Fatalf("slot %d keyed as %d", s.Number, n)
			}
		}
		for _, want := range []error{metrics.ErrMissing} {
			if err := snap.Require(0, metrics.NameCompletedTimestamp); err != nil && !errors.Is(err, want) {
				t.Fatalf("Require: %v", err)
			}
		}
	})
}
