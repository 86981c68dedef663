package qlogstat

import (
	"bytes"
	"errors"
	"io"
	"net/netip"
	"strings"
	"testing"
	"time"
)

const header = "\x1e{\"file_schema\":\"urn:ietf:params:qlog:file:sequential\",\"trace\":{\"vantage_point\":{\"type\":\"client\"}," +
	"\"common_fields\":{\"group_id\":\"abcd\",\"reference_time\":{\"clock_type\":\"monotonic\",\"epoch\":\"unknown\",\"wall_clock_time\":\"2000-01-01T00:00:01Z\"}}}}\n"

func rec(s string) string { return "\x1e" + s + "\n" }

func TestDecoderHeader(t *testing.T) {
	d, err := NewDecoder(strings.NewReader(header))
	if err != nil {
		t.Fatal(err)
	}
	want := Header{Vantage: "client", GroupID: "abcd", Reference: time.Date(2000, 1, 1, 0, 0, 1, 0, time.UTC)}
	if got := d.Header(); got != want {
		t.Errorf("header %+v, want %+v", got, want)
	}
	if _, err := d.Next(); !errors.Is(err, io.EOF) {
		t.Errorf("Next on a header alone: %v, want io.EOF", err)
	}
}

func TestDecoderEvents(t *testing.T) {
	tests := []struct {
		name    string
		record  string
		want    Event
		skipped bool
		wantErr bool
	}{
		{name: "started", record: `{"time":0,"name":"transport:connection_started","data":{"local":{"ip_v4":"1.0.0.7","port_v4":8000},"remote":{"ip_v4":"1.0.0.14","port_v4":8000}}}`,
			want: Event{Kind: KindStarted, Local: netip.MustParseAddrPort("1.0.0.7:8000"), Remote: netip.MustParseAddrPort("1.0.0.14:8000")}},
		{name: "sent with stream and blocked frames", record: `{"time":1.5,"name":"transport:packet_sent","data":{"header":{"packet_type":"1RTT","packet_number":9},"raw":{"length":1252,"payload_length":1200},"frames":[{"frame_type":"ack","ack_delay":0.1,"acked_ranges":[[1,4]]},{"frame_type":"stream","stream_id":4,"offset":0,"length":700},{"frame_type":"stream","stream_id":8,"offset":10,"length":300,"fin":true},{"frame_type":"stream_data_blocked","stream_id":4,"limit":10},{"frame_type":"data_blocked","limit":9}]}}`,
			want: Event{At: 1500 * time.Microsecond, Kind: KindSent, Length: 1252, StreamBytes: 1000, Blocked: 2}},
		{name: "metrics, changed fields only", record: `{"time":2,"name":"recovery:metrics_updated","data":{"smoothed_rtt":20.5,"congestion_window":40960,"bytes_in_flight":2504}}`,
			want: Event{At: 2 * time.Millisecond, Kind: KindMetrics, Has: HasSmoothedRTT | HasCwnd | HasBytesInFlight, SmoothedRTT: 20500 * time.Microsecond, Cwnd: 40960, BytesInFlight: 2504}},
		{name: "metrics with an explicit zero", record: `{"time":2,"name":"recovery:metrics_updated","data":{"bytes_in_flight":0}}`,
			want: Event{At: 2 * time.Millisecond, Kind: KindMetrics, Has: HasBytesInFlight}},
		{name: "pto count", record: `{"time":200,"name":"recovery:metrics_updated","data":{"pto_count":1}}`,
			want: Event{At: 200 * time.Millisecond, Kind: KindMetrics, Has: HasPTO}},
		{name: "state", record: `{"time":3,"name":"recovery:congestion_state_updated","data":{"new":"congestion_avoidance"}}`,
			want: Event{At: 3 * time.Millisecond, Kind: KindState, State: "congestion_avoidance"}},
		{name: "lost", record: `{"time":4,"name":"recovery:packet_lost","data":{"header":{"packet_type":"1RTT","packet_number":1055},"trigger":"reordering_threshold"}}`,
			want: Event{At: 4 * time.Millisecond, Kind: KindLost, Trigger: "reordering_threshold"}},
		{name: "marked", record: `{"time":5,"name":"flownet:chunk_marked","data":{}}`,
			want: Event{At: 5 * time.Millisecond, Kind: KindMarked}},
		{name: "received is skipped", record: `{"time":1,"name":"transport:packet_received","data":{"raw":{"length":50}}}`, skipped: true},
		{name: "no time", record: `{"name":"recovery:packet_lost","data":{}}`, wantErr: true},
		{name: "negative time", record: `{"time":-1,"name":"recovery:packet_lost","data":{}}`, wantErr: true},
		{name: "started without remote", record: `{"time":0,"name":"transport:connection_started","data":{"local":{"ip_v4":"1.0.0.7","port_v4":8000}}}`, wantErr: true},
		{name: "bad address", record: `{"time":0,"name":"transport:connection_started","data":{"local":{"ip_v4":"x","port_v4":1},"remote":{"ip_v4":"1.0.0.1","port_v4":1}}}`, wantErr: true},
		{name: "wrong type", record: `{"time":0,"name":"recovery:metrics_updated","data":{"congestion_window":"big"}}`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := NewDecoder(strings.NewReader(header + rec(tt.record)))
			if err != nil {
				t.Fatal(err)
			}
			ev, err := d.Next()
			switch {
			case tt.skipped:
				if !errors.Is(err, io.EOF) {
					t.Errorf("got %+v, %v; want the record skipped", ev, err)
				}
			case tt.wantErr:
				if err == nil || errors.Is(err, io.EOF) {
					t.Errorf("got %+v, %v; want an error", ev, err)
				}
			case err != nil:
				t.Fatal(err)
			case ev != tt.want:
				t.Errorf("got %+v\nwant %+v", ev, tt.want)
			}
		})
	}
}

func TestDecoderTruncatedRecord(t *testing.T) {
	in := header + rec(`{"time":1,"name":"recovery:packet_lost","data":{}}`) + "\x1e" + `{"time":2,"name":"recovery:packet_lost","da`
	d, err := NewDecoder(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Next(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Next(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("cut record: %v, want io.ErrUnexpectedEOF", err)
	}
}

func TestDecoderBadHeader(t *testing.T) {
	for _, in := range []string{"", "\x1e", "\x1e{not json}\n", "\x1e[1,2]\n"} {
		if _, err := NewDecoder(strings.NewReader(in)); err == nil {
			t.Errorf("NewDecoder(%q): no error", in)
		}
	}
}

func TestNodeOf(t *testing.T) {
	tests := []struct {
		addr string
		want int
		ok   bool
	}{
		{"1.0.0.1", 0, true},
		{"1.0.0.100", 99, true},
		{"1.0.1.0", 255, true},
		{"1.0.0.0", 0, false},
		{"2.0.0.1", 0, false},
		{"::1", 0, false},
	}
	for _, tt := range tests {
		got, ok := NodeOf(netip.MustParseAddr(tt.addr))
		if ok != tt.ok || (ok && got != tt.want) {
			t.Errorf("NodeOf(%s) = %d, %v; want %d, %v", tt.addr, got, ok, tt.want, tt.ok)
		}
	}
}

// FuzzDecoder: any input decodes to events or an error, never a panic,
// and Scan agrees.
func FuzzDecoder(f *testing.F) {
	f.Add([]byte(header + rec(`{"time":0,"name":"transport:connection_started","data":{"local":{"ip_v4":"1.0.0.7","port_v4":8000},"remote":{"ip_v4":"1.0.0.14","port_v4":8000}}}`) +
		rec(`{"time":2,"name":"recovery:metrics_updated","data":{"congestion_window":40960,"bytes_in_flight":2504}}`)))
	f.Add([]byte(header + rec(`{"time":1.5,"name":"transport:packet_sent","data":{"raw":{"length":1252},"frames":[{"frame_type":"stream","length":700}]}}`)))
	f.Add([]byte("\x1e{}\x1e{\"time\":1e400,\"name\":\"recovery:packet_lost\"}"))
	f.Fuzz(func(t *testing.T, in []byte) {
		d, err := NewDecoder(bytes.NewReader(in))
		if err != nil {
			return
		}
		for range 10000 {
			if _, err := d.Next(); err != nil {
				break
			}
		}
		w := []Window{{Slot: 1, Start: d.Header().Reference, End: d.Header().Reference.Add(time.Second)}}
		_, _ = Scan(bytes.NewReader(in), w, 50*time.Millisecond)
	})
}
