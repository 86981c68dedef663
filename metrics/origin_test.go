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
	const other = "# TYPE p2p_pubsub_rpc_recv_pub_bytes_total counter\np2p_pubsub_rpc_recv_pub_bytes_total{is_partial=\"false\",topic=\"/eth2/00/beacon_block/ssz_snappy\"} 5\n"
	tests := []struct {
		name, input, wantErr string
		want                 uint64
		present              bool
	}{
		{name: "payload topics summed, others ignored", input: topicBytes, want: 1320, present: true},
		{name: "only other topics: present, zero", input: other, present: true},
		{name: "absent", input: good},
		{name: "a gauge is refused", input: strings.Replace(other, "counter", "gauge", 1),
			wantErr: "p2p_pubsub_rpc_recv_pub_bytes_total: wrong metric type: declared gauge, want counter"},
		{name: "a fraction is refused", input: strings.Replace(other, "} 5", "} 5.5", 1),
			wantErr: `bad value: value 5.5 is not a count`},
	}
	for _, tt := range tests {
		snap, err := metrics.Parse(strings.NewReader(tt.input), "node-1")
		if failed(t, tt.name, err, tt.wantErr) {
			continue
		}
		if snap.TopicBytes != tt.want || snap.HasTopicBytes != tt.present || snap.Origin != metrics.OriginContract {
			t.Errorf("%s: topic bytes %d (present %v, origin %q), want %d (present %v) from the contract", tt.name, snap.TopicBytes, snap.HasTopicBytes, snap.Origin, tt.want, tt.present)
		}
	}
}

// failed reports whether a case is over: it wanted an error (which must
// contain want) or got an unwanted one (reported).
func failed(t *testing.T, name string, err error, want string) bool {
	t.Helper()
	switch {
	case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
		t.Errorf("%s: error %v, want %q", name, err, want)
	case want == "" && err != nil:
		t.Errorf("%s: %v", name, err)
	}
	return want != "" || err != nil
}

func TestTopicName(t *testing.T) {
	cases := [][2]string{
		{"/eth2/0a1b2c3d/execution_payload/ssz_snappy", "execution_payload"},
		{"/eth2/0a1b2c3d/execution_payload_segment/ssz_snappy", "execution_payload_segment"},
		{"execution_payload", "execution_payload"},
		{"/eth2/x/y", "/eth2/x/y"},
	}
	for _, c := range cases {
		if got := metrics.TopicName(c[0]); got != c[1] {
			t.Errorf("TopicName(%q) = %q, want %q", c[0], got, c[1])
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
		snap := metrics.NewSnapshot("n01", metrics.OriginStandardAPI)
		st := snap.AddSlot(4)
		if failed(t, tt.name, tt.set(st), tt.wantErr) {
			continue
		}
		if !st.HasSeries(tt.series) || snap.Slot(4) != st {
			t.Errorf("%s: %s not present after setting it", tt.name, tt.series)
		}
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

// TestParseReceiveBlock reads Prysm's ReceiveBlock summary as a node
// exports it (no quantiles: sum and count).
func TestParseReceiveBlock(t *testing.T) {
	const summary = "# HELP chain_service_processing_milliseconds Total time to call a chain service in ReceiveBlock()\n" +
		"# TYPE chain_service_processing_milliseconds summary\nchain_service_processing_milliseconds_sum 40366\nchain_service_processing_milliseconds_count 97\n"
	tests := []struct {
		name, input, wantErr string
		sum                  float64
		count                uint64
		present              bool
	}{
		{name: "sum and count", input: summary, sum: 40366, count: 97, present: true},
		{name: "absent", input: good},
		{name: "a gauge of the name is refused", input: "# TYPE chain_service_processing_milliseconds gauge\nchain_service_processing_milliseconds 5\n",
			wantErr: "chain_service_processing_milliseconds: wrong metric type: declared gauge, want summary"},
	}
	for _, tt := range tests {
		snap, err := metrics.Parse(strings.NewReader(tt.input), "node-1")
		if failed(t, tt.name, err, tt.wantErr) {
			continue
		}
		if snap.ReceiveBlockMillis != tt.sum || snap.ReceiveBlocks != tt.count || snap.HasReceiveBlock != tt.present {
			t.Errorf("%s: %v ms over %d blocks (present %v), want %v over %d (%v)", tt.name, snap.ReceiveBlockMillis, snap.ReceiveBlocks, snap.HasReceiveBlock, tt.sum, tt.count, tt.present)
		}
	}
}
