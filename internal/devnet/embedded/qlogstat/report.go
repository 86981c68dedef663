package qlogstat

import (
	"fmt"
	"io"
	"math"
	"net/netip"
	"slices"
	"sort"
	"time"
)

// NodeOf is the node index of a simulated address: simnet numbers node i
// 1.x.y.z with x.y.z = i+1 (simnet.IntToPublicIPv4; flownet's nodeAddr
// follows it). ok is false for another address.
func NodeOf(a netip.Addr) (int, bool) {
	if !a.Is4() {
		return 0, false
	}
	b := a.As4()
	if b[0] != 1 {
		return 0, false
	}
	v := int(b[1])<<16 | int(b[2])<<8 | int(b[3])
	return v - 1, v >= 1
}

// Options shape a report.
type Options struct {
	// Builder is the source node; UplinkMbps its uplink.
	Builder    int
	UplinkMbps float64
	// Bin is the width of the throughput bins; Carrying the least stream
	// data a direction sends in a window to count as carrying the payload.
	Bin      time.Duration
	Carrying int
	// PerConn lists the builder's connections one by one.
	PerConn bool
}

// dir is one sending direction over one window.
type dir struct {
	from, to int
	s        *ConnSlot
}

// Report writes, per window, the figures of the directions that carried
// the payload, then the builder's.
func Report(w io.Writer, conns []*Conn, windows []Window, o Options) {
	truncated := 0
	for _, c := range conns {
		if c.Truncated {
			truncated++
		}
	}
	fmt.Fprintf(w, "%d traces (sending directions)", len(conns))
	if truncated > 0 {
		fmt.Fprintf(w, ", %d cut short", truncated)
	}
	fmt.Fprintln(w)
	for i, win := range windows {
		var carrying, builder []dir
		for _, c := range conns {
			from, ok1 := NodeOf(c.Local.Addr())
			to, ok2 := NodeOf(c.Remote.Addr())
			if !ok1 || !ok2 {
				continue
			}
			d := dir{from, to, &c.Slots[i]}
			if d.s.Stream >= o.Carrying {
				carrying = append(carrying, d)
			}
			if from == o.Builder {
				builder = append(builder, d)
			}
		}
		length := win.End.Sub(win.Start)
		fmt.Fprintf(w, "\n== slot %d: reveal %s, window %.3f s (reveal to network completion)\n",
			win.Slot, win.Start.Format("15:04:05.000"), length.Seconds())
		fmt.Fprintf(w, "-- directions carrying ≥ %d B of stream data in the window: %d\n", o.Carrying, len(carrying))
		summarize(w, carrying)
		carry := slices.DeleteFunc(slices.Clone(builder), func(d dir) bool { return d.s.Stream < o.Carrying })
		fmt.Fprintf(w, "-- the builder's (node %d) directions carrying the payload: %d of %d\n", o.Builder, len(carry), len(builder))
		summarize(w, carry)
		uplink(w, builder, length, o)
		if o.PerConn {
			perConn(w, carry)
		}
	}
}

func summarize(w io.Writer, ds []dir) {
	if len(ds) == 0 {
		return
	}
	slow, states := 0, map[string]int{}
	var cwnd, peak, low, lost, cuts, spur, marks, queue, queuePeak, minRTT, limited, appLimited, stream []float64
	blocked, ptos := 0, 0
	withLoss, withCut := 0, 0
	for _, d := range ds {
		s := d.s
		if s.InSlowStart {
			slow++
		}
		states[s.State]++
		cwnd = append(cwnd, kb(s.Cwnd))
		peak = append(peak, kb(s.CwndPeak))
		low = append(low, kb(s.CwndLow))
		lost = append(lost, float64(s.Lost))
		cuts = append(cuts, float64(s.Cuts))
		spur = append(spur, float64(s.Spurious))
		marks = append(marks, float64(s.Marks))
		if s.Lost > 0 {
			withLoss++
		}
		if s.Cuts > 0 {
			withCut++
		}
		blocked += s.Blocked
		ptos += s.PTOs
		if s.MinRTT > 0 && s.SmoothedRTT > 0 {
			queue = append(queue, msf(s.SmoothedRTT-s.MinRTT))
		}
		if s.MinRTTEnd > 0 && s.SmoothedRTTPeak > 0 {
			queuePeak = append(queuePeak, msf(s.SmoothedRTTPeak-s.MinRTTEnd))
			minRTT = append(minRTT, msf(s.MinRTTEnd))
		}
		if s.Busy > 0 {
			limited = append(limited, float64(s.CwndLimited)/float64(s.Busy))
			appLimited = append(appLimited, float64(s.AppLimitedState)/float64(s.Busy))
		}
		stream = append(stream, kb(s.Stream))
	}
	fmt.Fprintf(w, "   at the reveal: %d in slow start, %d past it; logged state %s\n", slow, len(ds)-slow, fmtStates(states))
	fmt.Fprintf(w, "   cwnd at reveal (kB)            %s\n", q3(cwnd))
	fmt.Fprintf(w, "   cwnd peak in window (kB)       %s\n", q3(peak))
	fmt.Fprintf(w, "   cwnd low in window (kB)        %s\n", q3(low))
	fmt.Fprintf(w, "   stream data sent (kB)          %s  total %.0f\n", q3(stream), sum(stream))
	fmt.Fprintf(w, "   packets lost per direction     %s  mean %.2f max %.0f; %d of %d lost ≥1, total %.0f\n", q3(lost), mean(lost), maxf(lost), withLoss, len(ds), sum(lost))
	fmt.Fprintf(w, "   window cuts (→recovery)        %s  mean %.2f max %.0f; %d of %d cut ≥1\n", q3(cuts), mean(cuts), maxf(cuts), withCut, len(ds))
	fmt.Fprintf(w, "   spurious losses %.0f, CoDel marks %.0f, PTOs %d, DATA_BLOCKED/STREAM_DATA_BLOCKED frames sent %d\n", sum(spur), sum(marks), ptos, blocked)
	fmt.Fprintf(w, "   srtt − min RTT at reveal (ms)  %s\n", q3(queue))
	fmt.Fprintf(w, "   peak srtt − min RTT (ms)       %s\n", q3(queuePeak))
	fmt.Fprintf(w, "   min RTT (ms)                   %s\n", q3(minRTT))
	fmt.Fprintf(w, "   cwnd-limited share of busy time (bytes in flight ≥ cwnd − 3 packets) %s\n", q3(limited))
	fmt.Fprintf(w, "   time in quic-go's application_limited state over busy time %s\n", q3(appLimited))
}

// uplink shows how the builder's uplink was shared over the window, bin
// by bin: its use of the link, the directions sending, and Jain's index
// of their shares (1: equal).
func uplink(w io.Writer, ds []dir, length time.Duration, o Options) {
	if len(ds) == 0 || o.Bin <= 0 {
		return
	}
	bins := len(ds[0].s.Bins)
	capacity := o.UplinkMbps * 1e6 / 8 * o.Bin.Seconds()
	fmt.Fprintf(w, "   builder uplink per %v bin (stream bytes; capacity %.0f kB a bin at %.0f Mbps): use, directions sending, Jain index, top direction's share\n",
		o.Bin, capacity/1e3, o.UplinkMbps)
	var uses, jains []float64
	for b := range bins {
		var xs []float64
		total := 0.0
		for _, d := range ds {
			if b < len(d.s.Bins) && d.s.Bins[b] > 0 {
				xs = append(xs, float64(d.s.Bins[b]))
				total += float64(d.s.Bins[b])
			}
		}
		j, top := jain(xs), 0.0
		if total > 0 {
			top = maxf(xs) / total
		}
		uses = append(uses, total/capacity)
		if len(xs) > 1 {
			jains = append(jains, j)
		}
		fmt.Fprintf(w, "     %5.2f s  use %4.0f %%  %3d sending  Jain %.2f  top %.2f\n", (time.Duration(b) * o.Bin).Seconds(), 100*total/capacity, len(xs), j, top)
	}
	fmt.Fprintf(w, "   use over the window: mean %.0f %%; Jain index over bins with ≥2 senders %s\n", 100*mean(uses), q3(jains))
	var last []float64
	for _, d := range ds {
		if d.s.LastStream >= 0 && d.s.Stream >= o.Carrying {
			last = append(last, d.s.LastStream.Seconds()/length.Seconds())
		}
	}
	fmt.Fprintf(w, "   last stream packet of each carrying direction, share of the window %s\n", q3(last))
}

func perConn(w io.Writer, ds []dir) {
	sort.Slice(ds, func(i, j int) bool { return ds[i].s.Stream > ds[j].s.Stream })
	fmt.Fprintln(w, "   to    stream kB  first s  last s  cwnd@rev kB  peak kB  low kB  srtt@rev ms  minRTT ms  peak srtt ms  lost  cuts  marks  cwnd-lim  ss")
	for _, d := range ds {
		s := d.s
		lim := math.NaN()
		if s.Busy > 0 {
			lim = float64(s.CwndLimited) / float64(s.Busy)
		}
		fmt.Fprintf(w, "   %4d  %9.0f  %7.3f  %6.3f  %11.0f  %7.0f  %6.0f  %11.1f  %9.1f  %12.1f  %4d  %4d  %5d  %8.2f  %v\n",
			d.to, kb(s.Stream), s.FirstStream.Seconds(), s.LastStream.Seconds(), kb(s.Cwnd), kb(s.CwndPeak), kb(s.CwndLow),
			msf(s.SmoothedRTT), msf(s.MinRTTEnd), msf(s.SmoothedRTTPeak), s.Lost, s.Cuts, s.Marks, lim, s.InSlowStart)
	}
}

func fmtStates(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := ""
	for _, k := range keys {
		if out != "" {
			out += ", "
		}
		name := k
		if name == "" {
			name = "(none)"
		}
		out += fmt.Sprintf("%s %d", name, m[k])
	}
	return out
}

func kb(n int) float64            { return float64(n) / 1e3 }
func msf(d time.Duration) float64 { return float64(d) / 1e6 }

// q3 formats the p10, p50 and p90 (nearest rank).
func q3(xs []float64) string {
	if len(xs) == 0 {
		return "p10/p50/p90 -"
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return fmt.Sprintf("p10/p50/p90 %.2f / %.2f / %.2f", rank(s, 0.1), rank(s, 0.5), rank(s, 0.9))
}

func rank(sorted []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func sum(xs []float64) float64 {
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return sum(xs) / float64(len(xs))
}

func maxf(xs []float64) float64 {
	m := math.Inf(-1)
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// jain is Jain's fairness index of xs: 1 when equal, 1/n when one takes
// all.
func jain(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s, s2 := 0.0, 0.0
	for _, x := range xs {
		s += x
		s2 += x * x
	}
	return s * s / (float64(len(xs)) * s2)
}
