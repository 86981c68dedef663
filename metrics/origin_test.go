package metrics_test

import (
	"strings"
	"testing"
	"time"

	"github.com/segdiff/segdiff/metrics"
)

// topicBytes is Prysm's per-topic byte counter as a node exports it: two
// payload topics, one partial, and a topic that carries no payload.
const topicBytes = `# TYPE p2p_pubsub_rpc_recv_pub_bytes_total counter
p2p_pubsub_rpc_recv_pub_bytes_total{is_partial="false",topic="/eth2/0a1b2c3d/execution_payload/ssz_snappy"} 1000
p2p_pubsub_rpc_recv_pub_bytes_total{is_partial="true",topic="/eth2/0a1b2c3d/execution_payload/ssz_snappy"} 20
p2p_pubsub_rpc_recv_pub_bytes_total{is_partial="false",topic="/eth2/0a1b2c3d/execution_payload_segment/ssz_snappy"} 300
p2p_pubsub_rpc_recv_pub_bytes_total{is_partial="false",topic="/eth2/0a1b2c3d/beacon_block/ssz_snappy"} 999999
`

func TestParseTopicBytes(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		want    uint64
		present bool
		wantErr string
	}{
		{name: "payload topics summed, others ignored", input: topicBytes, want: 1320, present: true},
		{name: "only other topics: present, zero", input: "# TYPE p2p_pubsub_rpc_recv_pub_bytes_total counter\np2p_pubsub_rpc_recv_pub_bytes_total{is_partial=\"false\",topic=\"/eth2/00/beacon_block/ssz_snappy\"} 5\n", present: true},
		{name: "absent", input: good},
		{name: "a gauge is refused", input: "# TYPE p2p_pubsub_rpc_recv_pub_bytes_total gauge\np2p_pubsub_rpc_recv_pub_bytes_total{topic=\"x\"} 5\n",
			wantErr: "p2p_pubsub_rpc_recv_pub_bytes_total: wrong metric type: declared gauge, want counter"},
		{name: "a fraction is refused", input: "# TYPE p2p_pubsub_rpc_recv_pub_bytes_total counter\np2p_pubsub_rpc_recv_pub_bytes_total{topic=\"x\"} 5.5\n",
			wantErr: `p2p_pubsub_rpc_recv_pub_bytes_total{topic="x"}: bad value: value 5.5 is not a count`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap, err := metrics.Parse(strings.NewReader(tt.input), "node-1")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if snap.TopicBytes != tt.want || snap.HasTopicBytes != tt.present {
				t.Errorf("topic bytes %d (present %v), want %d (present %v)", snap.TopicBytes, snap.HasTopicBytes, tt.want, tt.present)
			}
			if snap.Origin != metrics.OriginContract {
				t.Errorf("origin %q, want contract", snap.Origin)
			}
		})
	}
}

func TestTopicName(t *testing.T) {
	for in, want := range map[string]string{
		"/eth2/0a1b2c3d/execution_payload/ssz_snappy":         "execution_payload",
		"/eth2/0a1b2c3d/execution_payload_segment/ssz_snappy": "execution_payload_segment",
		"execution_payload": "execution_payload",
		"/eth2/x/y":         "/eth2/x/y",
	} {
		if got := metrics.TopicName(in); got != want {
			t.Errorf("TopicName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSlotSetters(t *testing.T) {
	at := time.Unix(1_800_000_000, 0)
	tests := []struct {
		name    string
		set     func(*metrics.Slot) error
		series  string
		wantErr string
	}{
		{name: "completion", set: func(s *metrics.Slot) error { return s.SetTime(metrics.NameCompletedTimestamp, at) }, series: metrics.NameCompletedTimestamp},
		{name: "gossip", set: func(s *metrics.Slot) error { return s.SetTime(metrics.NamePayloadGossip, at) }, series: metrics.NamePayloadGossip},
		{name: "data bytes", set: func(s *metrics.Slot) error { return s.SetCount(metrics.NameReceivedBytes+`{kind="data"}`, 7) }, series: metrics.NameReceivedBytes + `{kind="data"}`},
		{name: "a count as a time", set: func(s *metrics.Slot) error { return s.SetTime(metrics.NamePayloadSize+`{encoding="raw"}`, at) }, wantErr: "not a time series"},
		{name: "a time as a count", set: func(s *metrics.Slot) error { return s.SetCount(metrics.NameRevealTimestamp, 1) }, wantErr: "not a count series"},
		{name: "a name with two series", set: func(s *metrics.Slot) error { return s.SetCount(metrics.NameReceivedBytes, 1) }, wantErr: "not one per-slot series"},
		{name: "zero time", set: func(s *metrics.Slot) error { return s.SetTime(metrics.NameCompletedTimestamp, time.Time{}) }, wantErr: "zero time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := metrics.NewSnapshot("n01", metrics.OriginStandardAPI)
			st := snap.AddSlot(4)
			err := tt.set(st)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !st.HasSeries(tt.series) || snap.Slot(4) != st {
				t.Errorf("%s not present after setting it", tt.series)
			}
		})
	}
}

func TestOriginReading(t *testing.T) {
	std := metrics.OriginStandardAPI
	if got := std.Reading(metrics.NameCompletedTimestamp); got != "execution_payload_available event" {
		t.Errorf("completion reads %q", got)
	}
	if got := std.Reading(metrics.NameReceivedBytes + `{kind="control"}`); !strings.Contains(got, "has no reading") {
		t.Errorf("control bytes read %q, want no reading", got)
	}
	if got := metrics.OriginContract.Reading(metrics.NameCompletedTimestamp); got != metrics.NameCompletedTimestamp {
		t.Errorf("contract reads %q", got)
	}
	if metrics.Origin("").String() != "contract" {
		t.Error("the zero origin is not the contract")
	}
	for _, r := range metrics.StandardReadings {
		if strings.TrimSpace(r.Reading) == "" || strings.TrimSpace(r.Definition) == "" {
			t.Errorf("%s: no reading or definition", r.Series)
		}
		if err := new(metrics.Slot).SetCount(r.Series, 1); err != nil && !strings.Contains(err.Error(), "not a count series") {
			t.Errorf("%s is not a series of the record: %v", r.Series, err)
		}
	}
}
