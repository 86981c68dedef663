package qlogstat

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

var ref = time.Date(2000, 1, 1, 0, 0, 1, 0, time.UTC)

func trace(records ...string) string {
	var b strings.Builder
	b.WriteString(header)
	b.WriteString(rec(`{"time":0,"name":"transport:connection_started","data":{"local":{"ip_v4":"1.0.0.1","port_v4":8000},"remote":{"ip_v4":"1.0.0.3","port_v4":8000}}}`))
	for _, r := range records {
		b.WriteString(rec(r))
	}
	return b.String()
}

func TestScan(t *testing.T) {
	in := trace(
		`{"time":0,"name":"recovery:congestion_state_updated","data":{"new":"slow_start"}}`,
		`{"time":10,"name":"recovery:metrics_updated","data":{"min_rtt":20,"smoothed_rtt":25,"congestion_window":40000,"bytes_in_flight":1000,"packets_in_flight":1}}`,
		`{"time":50,"name":"recovery:congestion_state_updated","data":{"new":"congestion_avoidance"}}`,
		// Before the window: the state it opens with.
		`{"time":90,"name":"recovery:metrics_updated","data":{"congestion_window":30000,"bytes_in_flight":1000}}`,
		// In the window [100, 200) ms: 40 ms with 1000 B in flight, then
		// 20 ms at the window (cwnd-limited), then nothing in flight.
		`{"time":110,"name":"transport:packet_sent","data":{"raw":{"length":1252},"frames":[{"frame_type":"stream","length":1200}]}}`,
		`{"time":140,"name":"recovery:metrics_updated","data":{"smoothed_rtt":60,"bytes_in_flight":28000,"packets_in_flight":22}}`,
		`{"time":150,"name":"recovery:packet_lost","data":{"trigger":"time_threshold"}}`,
		`{"time":150,"name":"recovery:congestion_state_updated","data":{"new":"recovery"}}`,
		`{"time":155,"name":"recovery:metrics_updated","data":{"congestion_window":21000,"bytes_in_flight":26748,"packets_in_flight":21}}`,
		`{"time":160,"name":"recovery:metrics_updated","data":{"latest_rtt":70}}`,
		`{"time":170,"name":"recovery:congestion_state_updated","data":{"new":"application_limited"}}`,
		`{"time":199,"name":"transport:packet_sent","data":{"raw":{"length":100},"frames":[{"frame_type":"stream","length":50}]}}`,
		// After the window: not counted.
		`{"time":250,"name":"recovery:packet_lost","data":{"trigger":"time_threshold"}}`,
	)
	w := []Window{{Slot: 2, Start: ref.Add(100 * time.Millisecond), End: ref.Add(200 * time.Millisecond)}}
	c, err := Scan(strings.NewReader(in), w, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if c.Local.String() != "1.0.0.1:8000" || c.Remote.String() != "1.0.0.3:8000" {
		t.Errorf("addresses %s → %s", c.Local, c.Remote)
	}
	got := c.Slots[0]
	want := ConnSlot{
		InSlowStart: false, State: "congestion_avoidance",
		Cwnd: 30000, BytesInFlight: 1000, SmoothedRTT: 25 * time.Millisecond, MinRTT: 20 * time.Millisecond,
		CwndPeak: 30000, CwndLow: 21000, SmoothedRTTPeak: 60 * time.Millisecond, LatestRTTPeak: 70 * time.Millisecond,
		MinRTTEnd: 20 * time.Millisecond,
		Sent:      1352, Stream: 1250, FirstStream: 10 * time.Millisecond, LastStream: 99 * time.Millisecond,
		Lost: 1, Cuts: 1,
		// 100-140 ms: 1000 B in flight; 140-160: 28000 ≥ 30000-3·1252
		// then ≥ 21000-3·1252; 160 on: an event with neither count, so
		// nothing in flight.
		Busy: 60 * time.Millisecond, CwndLimited: 20 * time.Millisecond, AppLimitedState: 30 * time.Millisecond,
		Bins: []int{1200, 50},
	}
	if !equalSlot(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func equalSlot(a, b ConnSlot) bool { return reflect.DeepEqual(a, b) }

func TestScanWindowBeforeAndAfterTrace(t *testing.T) {
	in := trace(`{"time":10,"name":"recovery:metrics_updated","data":{"congestion_window":40000}}`)
	w := []Window{
		{Slot: 1, Start: ref.Add(-time.Second), End: ref.Add(-time.Second / 2)},
		{Slot: 2, Start: ref.Add(time.Second), End: ref.Add(2 * time.Second)},
	}
	c, err := Scan(strings.NewReader(in), w, 0)
	if err != nil {
		t.Fatal(err)
	}
	if s := c.Slots[0]; !s.InSlowStart || s.Cwnd != 0 || s.FirstStream != -1 {
		t.Errorf("window before the trace: %+v", s)
	}
	if s := c.Slots[1]; !s.InSlowStart || s.State != "slow_start" || s.Cwnd != 40000 {
		t.Errorf("window after the trace: %+v", s)
	}
}

func TestScanNoStart(t *testing.T) {
	in := header + rec(`{"time":1,"name":"recovery:packet_lost","data":{}}`)
	if _, err := Scan(bytes.NewReader([]byte(in)), nil, 0); !errors.Is(err, ErrNoStart) {
		t.Errorf("got %v, want ErrNoStart", err)
	}
}

func TestJain(t *testing.T) {
	tests := []struct {
		xs   []float64
		want float64
	}{
		{[]float64{1, 1, 1, 1}, 1},
		{[]float64{1, 0, 0, 0}, 0.25},
		{[]float64{3, 1}, 0.8},
	}
	for _, tt := range tests {
		if got := jain(tt.xs); got < tt.want-1e-9 || got > tt.want+1e-9 {
			t.Errorf("jain(%v) = %v, want %v", tt.xs, got, tt.want)
		}
	}
}
