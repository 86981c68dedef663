package flownet

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// qlogTrace writes one window's events in the qlog subset package qlogstat
// reads (JSON-SEQ, quic-go's event names and fields), so the flows-cc
// model's congestion state can be laid beside the packet model's quic-go
// traces. Only with Options.QlogDir; a window without one has a nil trace
// and pays a nil check per event.
type qlogTrace struct {
	f   *os.File
	w   *bufio.Writer
	ref time.Time
	// srtt is RFC 9002's smoothed RTT over the window's acknowledgements,
	// kept here only: the window itself has none.
	srtt  time.Duration
	state string
	err   error
}

// newQlogTrace creates dir/flows-FROM-TO_client.sqlog for the window of
// the connection from → to.
func newQlogTrace(dir string, from, to int) (*qlogTrace, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("flows-%06d-%06d_client.sqlog", from, to)))
	if err != nil {
		return nil, err
	}
	t := &qlogTrace{f: f, w: bufio.NewWriterSize(f, 32<<10), ref: time.Now(), state: "slow_start"}
	fmt.Fprintf(t.w, "\x1e{\"file_schema\":\"urn:ietf:params:qlog:file:sequential\",\"title\":\"segdiff flownet (flows-cc) window\","+
		"\"trace\":{\"vantage_point\":{\"type\":\"client\"},\"common_fields\":{\"group_id\":\"flows-%d-%d\","+
		"\"reference_time\":{\"clock_type\":\"monotonic\",\"epoch\":\"unknown\",\"wall_clock_time\":%q}}}}\n",
		from, to, t.ref.UTC().Format(time.RFC3339Nano))
	t.event("transport:connection_started", fmt.Sprintf(`{"local":{"ip_v4":%q,"port_v4":8000},"remote":{"ip_v4":%q,"port_v4":8000}}`,
		nodeIP(from), nodeIP(to)))
	t.event("recovery:congestion_state_updated", `{"new":"slow_start"}`)
	return t, nil
}

// nodeIP is node i's address, as nodeAddr numbers it.
func nodeIP(i int) string {
	v := i + 1
	return fmt.Sprintf("1.%d.%d.%d", byte(v>>16), byte(v>>8), byte(v))
}

func (t *qlogTrace) event(name, data string) {
	if t.err != nil {
		return
	}
	at := float64(time.Since(t.ref)) / 1e6
	_, t.err = fmt.Fprintf(t.w, "\x1e{\"time\":%s,\"name\":%q,\"data\":%s}\n", strconv.FormatFloat(at, 'f', -1, 64), name, data)
}

// sent logs a chunk entering the window as one packet of its wire bytes.
func (t *qlogTrace) sent(wire, data, inFlight int) {
	t.event("transport:packet_sent", fmt.Sprintf(`{"raw":{"length":%d},"frames":[{"frame_type":"stream","length":%d}]}`, wire, data))
	t.event("recovery:metrics_updated", fmt.Sprintf(`{"bytes_in_flight":%d}`, inFlight))
}

// acked logs an acknowledgement: the mark if any, the state the window is
// in after it (as quic-go logs a change), and the metrics.
func (t *qlogTrace) acked(w *window, rtt time.Duration, marked, cut, limited bool) {
	if t.srtt == 0 {
		t.srtt = rtt
	} else {
		t.srtt = (7*t.srtt + rtt) / 8
	}
	if marked {
		t.event("flownet:chunk_marked", "{}")
	}
	state := t.state
	switch {
	case cut:
		state = "recovery"
	case marked:
	case !limited:
		state = "application_limited"
	case w.cwnd < w.ssthresh:
		state = "slow_start"
	default:
		state = "congestion_avoidance"
	}
	if state != t.state {
		t.state = state
		t.event("recovery:congestion_state_updated", fmt.Sprintf(`{"new":%q}`, state))
	}
	t.event("recovery:metrics_updated", fmt.Sprintf(`{"min_rtt":%s,"smoothed_rtt":%s,"latest_rtt":%s,"congestion_window":%d,"bytes_in_flight":%d}`,
		msString(w.minRTT), msString(t.srtt), msString(rtt), int(w.cwnd), w.inFlight))
}

// lost logs a dropped chunk found lost, and the cut if it made one.
func (t *qlogTrace) lost(w *window, cut bool) {
	t.event("recovery:packet_lost", "{}")
	if cut && t.state != "recovery" {
		t.state = "recovery"
		t.event("recovery:congestion_state_updated", `{"new":"recovery"}`)
	}
	t.event("recovery:metrics_updated", fmt.Sprintf(`{"congestion_window":%d,"bytes_in_flight":%d}`, int(w.cwnd), w.inFlight))
}

func msString(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', -1, 64) }

func (t *qlogTrace) close() error {
	err := t.w.Flush()
	if cerr := t.f.Close(); err == nil {
		err = cerr
	}
	if t.err != nil {
		return t.err
	}
	return err
}
