package qlogstat

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"time"
)

// limitedSlack is quic-go's test for a sender close to using its window
// (cubic_sender.go isCwndLimited: at most three packets of room).
const limitedSlack = 3 * 1252

// Window is the span of one payload slot the figures cover: from the
// reveal to the network's completion, in virtual time.
type Window struct {
	Slot       uint64
	Start, End time.Time
}

// Conn is one endpoint's trace: the sending direction from Local to
// Remote, its congestion controller's state over each window.
type Conn struct {
	Header        Header
	Local, Remote netip.AddrPort
	Slots         []ConnSlot
	// Truncated: the trace ended mid-record (a run cut short).
	Truncated bool
}

// ConnSlot is one sending direction over one window. Times are from the
// window's start.
type ConnSlot struct {
	// InSlowStart: the controller had not left slow start by the window's
	// start (no congestion_avoidance or recovery state logged before it).
	InSlowStart bool
	// State is the last congestion state logged before the start.
	State string
	// The state at the start.
	Cwnd, BytesInFlight int
	SmoothedRTT, MinRTT time.Duration
	// Over the window.
	CwndPeak, CwndLow              int
	SmoothedRTTPeak, LatestRTTPeak time.Duration
	MinRTTEnd                      time.Duration
	// Sent is the bytes of packets sent, Stream the stream data in them.
	Sent, Stream int
	// FirstStream and LastStream: when the first and the last packet with
	// stream data left (-1: none).
	FirstStream, LastStream time.Duration
	Lost, Cuts, Spurious    int
	Marks, Blocked, PTOs    int
	// Busy is the time with bytes in flight; CwndLimited the part of it
	// with at most three packets of the window free; AppLimitedState the
	// time the logged state was application_limited.
	Busy, CwndLimited, AppLimitedState time.Duration
	// Bins holds the stream bytes sent per bin of the window.
	Bins []int
}

// ErrNoStart is returned for a trace without a connection_started event.
var ErrNoStart = errors.New("qlog trace without connection_started")

// ctl is the replayed controller state. quic-go's metrics_updated carries
// only the fields that changed and omits zeros: an event without
// bytes_in_flight and packets_in_flight (and not a PTO count) is taken to
// have set both to zero, as every send and acknowledgement changes the
// packet count.
type ctl struct {
	cwnd, bif                 int
	srtt, minRTT, latest      time.Duration
	state                     string
	leftSlowStart, appLimited bool
	at                        time.Duration
}

// Scan reads one trace and returns its figures over windows (in time
// order, not overlapping), with stream bytes binned by bin.
func Scan(r io.Reader, windows []Window, bin time.Duration) (*Conn, error) {
	d, err := NewDecoder(r)
	if err != nil {
		return nil, err
	}
	c := &Conn{Header: d.Header(), Slots: make([]ConnSlot, len(windows))}
	ref := c.Header.Reference
	type span struct{ start, end time.Duration }
	spans := make([]span, len(windows))
	for i, w := range windows {
		spans[i] = span{w.Start.Sub(ref), w.End.Sub(ref)}
		s := &c.Slots[i]
		s.FirstStream, s.LastStream = -1, -1
		if bin > 0 {
			s.Bins = make([]int, int((w.End.Sub(w.Start)+bin-1)/bin))
		}
	}
	var st ctl
	st.state = "slow_start"
	cur := 0 // the first window not yet ended
	opened := false
	started := false
	// advance accrues the state's time up to t into the windows it spans,
	// opening each window whose start it reaches and closing each whose
	// end it reaches.
	advance := func(t time.Duration) {
		for cur < len(spans) {
			sp, s := spans[cur], &c.Slots[cur]
			if !opened {
				if t < sp.start {
					break
				}
				st.at = max(st.at, sp.start)
				s.InSlowStart, s.State = !st.leftSlowStart, st.state
				s.Cwnd, s.BytesInFlight, s.SmoothedRTT, s.MinRTT = st.cwnd, st.bif, st.srtt, st.minRTT
				s.CwndPeak, s.CwndLow, s.SmoothedRTTPeak = st.cwnd, st.cwnd, st.srtt
				opened = true
			}
			end := min(t, sp.end)
			if dt := end - st.at; dt > 0 {
				if st.bif > 0 {
					s.Busy += dt
					if st.bif >= st.cwnd-limitedSlack {
						s.CwndLimited += dt
					}
				}
				if st.appLimited {
					s.AppLimitedState += dt
				}
				st.at = end
			}
			if t < sp.end {
				break
			}
			s.MinRTTEnd = st.minRTT
			cur++
			opened = false
		}
		st.at = max(st.at, t)
	}
	in := func(t time.Duration) *ConnSlot {
		if cur < len(spans) && opened {
			return &c.Slots[cur]
		}
		return nil
	}
	for {
		ev, err := d.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			c.Truncated = true
			break
		}
		if err != nil {
			return nil, err
		}
		advance(ev.At)
		s := in(ev.At)
		switch ev.Kind {
		case KindStarted:
			c.Local, c.Remote, started = ev.Local, ev.Remote, true
		case KindSent:
			if s == nil {
				continue
			}
			s.Sent += ev.Length
			s.Blocked += ev.Blocked
			if ev.StreamBytes > 0 {
				off := ev.At - spans[cur].start
				s.Stream += ev.StreamBytes
				if s.FirstStream < 0 {
					s.FirstStream = off
				}
				s.LastStream = off
				if len(s.Bins) > 0 {
					s.Bins[min(int(off/bin), len(s.Bins)-1)] += ev.StreamBytes
				}
			}
		case KindMetrics:
			if ev.Has&HasPTO != 0 {
				if s != nil {
					s.PTOs++
				}
				continue
			}
			if ev.Has&HasCwnd != 0 {
				st.cwnd = ev.Cwnd
			}
			switch {
			case ev.Has&HasBytesInFlight != 0:
				st.bif = ev.BytesInFlight
			case ev.Has&HasPacketsInFlight == 0:
				st.bif = 0
			}
			if ev.Has&HasSmoothedRTT != 0 {
				st.srtt = ev.SmoothedRTT
			}
			if ev.Has&HasMinRTT != 0 {
				st.minRTT = ev.MinRTT
			}
			if ev.Has&HasLatestRTT != 0 {
				st.latest = ev.LatestRTT
			}
			if s != nil {
				s.CwndPeak = max(s.CwndPeak, st.cwnd)
				s.CwndLow = min(s.CwndLow, st.cwnd)
				s.SmoothedRTTPeak = max(s.SmoothedRTTPeak, st.srtt)
				if ev.Has&HasLatestRTT != 0 {
					s.LatestRTTPeak = max(s.LatestRTTPeak, st.latest)
				}
			}
		case KindState:
			if ev.State == "recovery" && st.state != "recovery" && s != nil {
				s.Cuts++
			}
			st.state = ev.State
			st.appLimited = ev.State == "application_limited"
			if ev.State == "congestion_avoidance" || ev.State == "recovery" {
				st.leftSlowStart = true
			}
		case KindLost:
			if s != nil {
				s.Lost++
			}
		case KindSpurious:
			if s != nil {
				s.Spurious++
			}
		case KindMarked:
			if s != nil {
				s.Marks++
			}
		}
	}
	// A window the trace ended inside (or before) keeps the last state.
	if len(spans) > 0 {
		advance(spans[len(spans)-1].end)
	}
	if !started {
		return nil, fmt.Errorf("%w (group %s)", ErrNoStart, c.Header.GroupID)
	}
	return c, nil
}
