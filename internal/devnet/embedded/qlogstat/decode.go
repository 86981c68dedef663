// Package qlogstat reads the qlog traces a simulation writes (quic-go's,
// one file per connection endpoint, when QLOGDIR is set on the packet
// model; flownet's, in the same format, on the flows-cc model) and reports
// each connection's congestion state around a payload slot: slow start or
// congestion avoidance, window, losses and cuts, round trip against the
// least seen, whether the sender used its window, and how a node's uplink
// was shared among its connections.
//
// Only the events and fields this package reads are decoded: the header's
// vantage point and reference time, transport:connection_started,
// transport:packet_sent (raw length, stream and blocked frames),
// recovery:metrics_updated, recovery:congestion_state_updated,
// recovery:packet_lost, recovery:spurious_loss and flownet:chunk_marked.
package qlogstat

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/netip"
	"time"
)

// recordSeparator starts every JSON-SEQ record (RFC 7464).
const recordSeparator = 0x1e

// maxRecord bounds one record; quic-go's largest are packets with many
// ACK ranges, far below it.
const maxRecord = 4 << 20

// Header is a trace's first record.
type Header struct {
	// Vantage is "client" or "server".
	Vantage string
	// GroupID is the connection's original destination connection ID.
	GroupID string
	// Reference is the instant event times count from (virtual time in a
	// synctest bubble: 2000-01-01T00:00:00Z is the bubble's start).
	Reference time.Time
}

// Kind is an event's type, of those the package reads.
type Kind uint8

const (
	KindStarted Kind = iota + 1
	KindSent
	KindMetrics
	KindState
	KindLost
	KindSpurious
	KindMarked
)

// Metrics fields, as Has bits: quic-go logs only the fields that changed
// and omits zeros.
const (
	HasCwnd = 1 << iota
	HasBytesInFlight
	HasPacketsInFlight
	HasSmoothedRTT
	HasMinRTT
	HasLatestRTT
	HasPTO
)

// Event is one decoded record.
type Event struct {
	// At is the event's time from the header's reference.
	At   time.Duration
	Kind Kind
	// Local and Remote (KindStarted): the endpoint's addresses.
	Local, Remote netip.AddrPort
	// Length is a sent packet's size on the wire; StreamBytes the stream
	// data it carries, Blocked its DATA_BLOCKED and STREAM_DATA_BLOCKED
	// frames (KindSent).
	Length, StreamBytes, Blocked int
	// KindMetrics: the fields present, per Has.
	Has                                  uint8
	Cwnd, BytesInFlight, PacketsInFlight int
	SmoothedRTT, MinRTT, LatestRTT       time.Duration
	// State is the new congestion state (KindState), Trigger a loss's
	// reason (KindLost).
	State, Trigger string
}

// Decoder reads one trace.
type Decoder struct {
	sc     *bufio.Scanner
	header Header
}

// NewDecoder reads the header of the trace in r.
func NewDecoder(r io.Reader) (*Decoder, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxRecord)
	sc.Split(splitRecords)
	d := &Decoder{sc: sc}
	if !sc.Scan() {
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("qlog header: %w", err)
		}
		return nil, fmt.Errorf("qlog header: %w", io.ErrUnexpectedEOF)
	}
	var h struct {
		Trace struct {
			VantagePoint struct {
				Type string `json:"type"`
			} `json:"vantage_point"`
			CommonFields struct {
				GroupID       string `json:"group_id"`
				ReferenceTime struct {
					WallClockTime time.Time `json:"wall_clock_time"`
				} `json:"reference_time"`
			} `json:"common_fields"`
		} `json:"trace"`
	}
	if err := json.Unmarshal(sc.Bytes(), &h); err != nil {
		return nil, fmt.Errorf("qlog header: %w", err)
	}
	d.header = Header{Vantage: h.Trace.VantagePoint.Type, GroupID: h.Trace.CommonFields.GroupID,
		Reference: h.Trace.CommonFields.ReferenceTime.WallClockTime}
	return d, nil
}

// Header is the trace's header.
func (d *Decoder) Header() Header { return d.header }

// Next returns the next event of a kind the package reads; io.EOF at the
// end. A trace cut short (the writer stopped mid-record) ends with
// io.ErrUnexpectedEOF.
func (d *Decoder) Next() (Event, error) {
	for d.sc.Scan() {
		rec := d.sc.Bytes()
		kind := kindOf(eventName(rec))
		if kind == 0 {
			continue
		}
		ev, err := decodeEvent(rec, kind)
		if err != nil {
			if !json.Valid(rec) {
				return Event{}, fmt.Errorf("qlog record %.60q: %w", rec, io.ErrUnexpectedEOF)
			}
			return Event{}, err
		}
		return ev, nil
	}
	if err := d.sc.Err(); err != nil {
		return Event{}, err
	}
	return Event{}, io.EOF
}

// splitRecords splits JSON-SEQ at record separators, dropping them and
// the whitespace around a record.
func splitRecords(data []byte, atEOF bool) (int, []byte, error) {
	start := 0
	for start < len(data) && (data[start] == recordSeparator || isSpace(data[start])) {
		start++
	}
	if start == len(data) {
		if atEOF {
			return len(data), nil, nil
		}
		return start, nil, nil
	}
	if i := bytes.IndexByte(data[start:], recordSeparator); i >= 0 {
		return start + i, bytes.TrimRight(data[start:start+i], " \t\r\n"), nil
	}
	if atEOF {
		return len(data), bytes.TrimRight(data[start:], " \t\r\n"), nil
	}
	return start, nil, nil
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\r' || b == '\n' }

var namePrefix = []byte(`"name":"`)

// eventName finds a record's event name without decoding it, so records
// the package does not read (most of them: packets received) cost a scan.
func eventName(rec []byte) string {
	i := bytes.Index(rec, namePrefix)
	if i < 0 {
		return ""
	}
	rest := rec[i+len(namePrefix):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return ""
	}
	return string(rest[:j])
}

func kindOf(name string) Kind {
	switch name {
	case "transport:connection_started":
		return KindStarted
	case "transport:packet_sent":
		return KindSent
	case "recovery:metrics_updated":
		return KindMetrics
	case "recovery:congestion_state_updated":
		return KindState
	case "recovery:packet_lost":
		return KindLost
	case "recovery:spurious_loss":
		return KindSpurious
	case "flownet:chunk_marked":
		return KindMarked
	}
	return 0
}

type endpoint struct {
	IP   string `json:"ip_v4"`
	Port uint16 `json:"port_v4"`
}

func (e endpoint) addrPort() (netip.AddrPort, error) {
	a, err := netip.ParseAddr(e.IP)
	if err != nil {
		return netip.AddrPort{}, err
	}
	return netip.AddrPortFrom(a, e.Port), nil
}

// wireEvent holds the fields of every kind read; absent ones stay nil.
type wireEvent struct {
	Time *float64 `json:"time"`
	Data struct {
		Local  *endpoint `json:"local"`
		Remote *endpoint `json:"remote"`
		Raw    *struct {
			Length int `json:"length"`
		} `json:"raw"`
		Frames []struct {
			Type   string `json:"frame_type"`
			Length int    `json:"length"`
		} `json:"frames"`
		Cwnd            *int     `json:"congestion_window"`
		BytesInFlight   *int     `json:"bytes_in_flight"`
		PacketsInFlight *int     `json:"packets_in_flight"`
		SmoothedRTT     *float64 `json:"smoothed_rtt"`
		MinRTT          *float64 `json:"min_rtt"`
		LatestRTT       *float64 `json:"latest_rtt"`
		PTOCount        *int     `json:"pto_count"`
		New             string   `json:"new"`
		Trigger         string   `json:"trigger"`
	} `json:"data"`
}

var errNoTime = errors.New("qlog event without a time")

func decodeEvent(rec []byte, kind Kind) (Event, error) {
	var w wireEvent
	if err := json.Unmarshal(rec, &w); err != nil {
		return Event{}, fmt.Errorf("qlog event: %w", err)
	}
	if w.Time == nil || math.IsNaN(*w.Time) || math.IsInf(*w.Time, 0) || *w.Time < 0 || *w.Time > 1e12 {
		return Event{}, errNoTime
	}
	ev := Event{At: ms(*w.Time), Kind: kind}
	d := &w.Data
	switch kind {
	case KindStarted:
		if d.Local == nil || d.Remote == nil {
			return Event{}, errors.New("qlog connection_started without local and remote")
		}
		var err error
		if ev.Local, err = d.Local.addrPort(); err != nil {
			return Event{}, fmt.Errorf("qlog connection_started: %w", err)
		}
		if ev.Remote, err = d.Remote.addrPort(); err != nil {
			return Event{}, fmt.Errorf("qlog connection_started: %w", err)
		}
	case KindSent:
		if d.Raw != nil {
			ev.Length = d.Raw.Length
		}
		for _, f := range d.Frames {
			switch f.Type {
			case "stream":
				ev.StreamBytes += f.Length
			case "data_blocked", "stream_data_blocked":
				ev.Blocked++
			}
		}
	case KindMetrics:
		setInt(&ev, HasCwnd, &ev.Cwnd, d.Cwnd)
		setInt(&ev, HasBytesInFlight, &ev.BytesInFlight, d.BytesInFlight)
		setInt(&ev, HasPacketsInFlight, &ev.PacketsInFlight, d.PacketsInFlight)
		setDur(&ev, HasSmoothedRTT, &ev.SmoothedRTT, d.SmoothedRTT)
		setDur(&ev, HasMinRTT, &ev.MinRTT, d.MinRTT)
		setDur(&ev, HasLatestRTT, &ev.LatestRTT, d.LatestRTT)
		if d.PTOCount != nil {
			ev.Has |= HasPTO
		}
	case KindState:
		ev.State = d.New
	case KindLost:
		ev.Trigger = d.Trigger
	}
	return ev, nil
}

func setInt(ev *Event, bit uint8, dst *int, v *int) {
	if v != nil {
		ev.Has |= bit
		*dst = *v
	}
}

func setDur(ev *Event, bit uint8, dst *time.Duration, v *float64) {
	if v != nil && !math.IsNaN(*v) && !math.IsInf(*v, 0) && math.Abs(*v) < 1e9 {
		ev.Has |= bit
		*dst = ms(*v)
	}
}

// ms converts qlog's milliseconds.
func ms(v float64) time.Duration { return time.Duration(math.Round(v * 1e6)) }
