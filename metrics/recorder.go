package metrics

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	segmode "github.com/segdiff/segdiff/diffusion/mode"

	"github.com/prometheus/client_golang/prometheus"
)

// DefaultRetainedSlots is how many slots' per-slot series a Recorder keeps
// unless WithRetainedSlots says otherwise: 64 slots of 12 s outlive any
// reasonable scrape interval.
const DefaultRetainedSlots = 64

// Kind says which part of a node's traffic bytes belong to.
type Kind uint8

// Kinds of received bytes.
const (
	// KindData is message data of every copy received, duplicates included.
	KindData Kind = iota
	// KindControl is IHAVE/IWANT/IDONTWANT bytes naming the payload's message ids.
	KindControl
)

// String returns the kind label value ("data", "control").
func (k Kind) String() string {
	switch k {
	case KindData:
		return "data"
	case KindControl:
		return "control"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Option configures a Recorder.
type Option func(*recorderOptions) error

type recorderOptions struct {
	retained             uint64
	mode, format, client string
	infoSet              bool
}

// WithRetainedSlots keeps the per-slot series of the newest n slots; older
// slots' label values are deleted. Default DefaultRetainedSlots; n must be ≥ 1.
func WithRetainedSlots(n int) Option {
	return func(o *recorderOptions) error {
		if n < 1 {
			return fmt.Errorf("retained slots %d: must be at least 1", n)
		}
		o.retained = uint64(n)
		return nil
	}
}

// WithInfo sets the labels of payload_diffusion_info. Required: mode is one
// of package mode's names, format (e.g. "segdiff/1") and client are non-empty.
func WithInfo(mode, format, client string) Option {
	return func(o *recorderOptions) error {
		if _, ok := segmode.Lookup(segmode.Mode(mode)); !ok {
			return fmt.Errorf("info mode %q: want one of %v", mode, segmode.Names())
		}
		if format == "" {
			return errors.New("info format: empty")
		}
		if client == "" {
			return errors.New("info client: empty")
		}
		o.mode, o.format, o.client, o.infoSet = mode, format, client, true
		return nil
	}
}

// Recorder exports the metrics contract for one node into the registerer it
// was built with. It keeps no global state, so every simulated node can own
// one with its own registry. All methods are safe for concurrent use.
//
// Per-slot events count once: the first call of BlockArrived,
// BlockInstalled, FirstArrival, Completed and Revealed for a slot sets the
// series, later calls for that slot are ignored. Events for slots at or
// below newest−N (N = retained slots) are dropped, so the exposition stays
// bounded; seeing a newer slot deletes the series of slots that fall out of
// the window.
//
// Timestamps are exported as Unix seconds with millisecond precision from
// the time.Time the caller passes: wall clock on a real node; under the
// embedded devnet's virtual clock (testing/synctest) they start at
// 2000-01-01T00:00:00Z.
type Recorder struct {
	retained uint64

	mu     sync.Mutex
	newest uint64
	seen   bool // whether newest is set
	slots  map[uint64]*slotState

	info                            *prometheus.GaugeVec
	reveal, blockArrival, installed *prometheus.GaugeVec
	firstArrival, completed         *prometheus.GaugeVec
	payloadSize, segmentsK          *prometheus.GaugeVec
	receivedBytes                   *prometheus.GaugeVec
	segmentsReceived, duplicates    *prometheus.GaugeVec
	netBytes                        *prometheus.GaugeVec
	installDelay                    prometheus.Histogram
	bytesTotal, rejected            *prometheus.CounterVec
	deferred                        prometheus.Counter
	perSlot                         []*prometheus.GaugeVec
}

// slotState is what the Recorder remembers about one retained slot.
type slotState struct {
	blockArrival                                 time.Time
	arrived, installed, first, completed, reveal bool
	segments, duplicates                         uint64
	bytes                                        [2]uint64 // by Kind
}

// NewRecorder registers the contract's series with reg and returns the
// Recorder that feeds them. WithInfo is required. The counters and the
// histogram are exported (at zero) from the start, every reason and kind
// included; per-slot series appear with their first event.
func NewRecorder(reg prometheus.Registerer, opts ...Option) (*Recorder, error) {
	if reg == nil {
		return nil, errors.New("new recorder: nil registerer")
	}
	o := recorderOptions{retained: DefaultRetainedSlots}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, fmt.Errorf("new recorder: %w", err)
		}
	}
	if !o.infoSet {
		return nil, errors.New("new recorder: no info specified (use WithInfo)")
	}
	r := &Recorder{retained: o.retained, slots: make(map[uint64]*slotState)}
	gauge := func(name string) *prometheus.GaugeVec {
		d := mustLookup(name)
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: d.Name, Help: d.Help}, d.Labels)
	}
	counter := func(name string) *prometheus.CounterVec {
		d := mustLookup(name)
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: d.Name, Help: d.Help}, d.Labels)
	}
	r.info = gauge(NameInfo)
	r.reveal = gauge(NameRevealTimestamp)
	r.payloadSize = gauge(NamePayloadSize)
	r.segmentsK = gauge(NamePayloadSegments)
	r.blockArrival = gauge(NameBlockArrivalTimestamp)
	r.installed = gauge(NameBlockInstalledTimestamp)
	r.firstArrival = gauge(NameFirstArrivalTimestamp)
	r.completed = gauge(NameCompletedTimestamp)
	r.receivedBytes = gauge(NameReceivedBytes)
	r.segmentsReceived = gauge(NameSegmentsReceived)
	r.duplicates = gauge(NameDuplicateSegments)
	r.netBytes = gauge(NameNetworkCompletionBytes)
	d := mustLookup(NameBlockInstallDelay)
	r.installDelay = prometheus.NewHistogram(prometheus.HistogramOpts{Name: d.Name, Help: d.Help, Buckets: InstallDelayBuckets})
	r.bytesTotal = counter(NameReceivedBytesTotal)
	r.rejected = counter(NameSegmentsRejectedTotal)
	d = mustLookup(NameSegmentsDeferredTotal)
	r.deferred = prometheus.NewCounter(prometheus.CounterOpts{Name: d.Name, Help: d.Help})
	r.perSlot = []*prometheus.GaugeVec{r.reveal, r.payloadSize, r.segmentsK, r.blockArrival, r.installed,
		r.firstArrival, r.completed, r.receivedBytes, r.segmentsReceived, r.duplicates, r.netBytes}

	// Registration order follows Definitions so a failure names the first
	// clashing series.
	collectors := map[string]prometheus.Collector{
		NameInfo: r.info, NameRevealTimestamp: r.reveal, NamePayloadSize: r.payloadSize,
		NamePayloadSegments: r.segmentsK, NameBlockArrivalTimestamp: r.blockArrival,
		NameBlockInstalledTimestamp: r.installed, NameBlockInstallDelay: r.installDelay,
		NameFirstArrivalTimestamp: r.firstArrival, NameCompletedTimestamp: r.completed,
		NameReceivedBytes: r.receivedBytes, NameSegmentsReceived: r.segmentsReceived,
		NameDuplicateSegments: r.duplicates, NameNetworkCompletionBytes: r.netBytes, NameReceivedBytesTotal: r.bytesTotal,
		NameSegmentsRejectedTotal: r.rejected, NameSegmentsDeferredTotal: r.deferred,
	}
	var done []prometheus.Collector
	for _, def := range Definitions {
		c := collectors[def.Name]
		if err := reg.Register(c); err != nil {
			for _, u := range done {
				reg.Unregister(u)
			}
			return nil, fmt.Errorf("new recorder: register %s: %w", def.Name, err)
		}
		done = append(done, c)
	}

	r.info.WithLabelValues(o.mode, o.format, o.client).Set(1)
	for _, k := range []Kind{KindData, KindControl} {
		r.bytesTotal.WithLabelValues(k.String())
	}
	for _, reason := range Reasons {
		r.rejected.WithLabelValues(reason)
	}
	return r, nil
}

func mustLookup(name string) Definition {
	d, ok := Lookup(name)
	if !ok {
		panic("metrics: " + name + " missing from Definitions")
	}
	return d
}

// unixSeconds is t as float Unix seconds, truncated to milliseconds.
func unixSeconds(t time.Time) float64 { return float64(t.UnixMilli()) / 1000 }

// slot returns the state of slot, advancing the retention window; nil when
// slot is already outside it. Callers hold r.mu.
func (r *Recorder) slot(slot uint64) *slotState {
	if r.seen && r.newest >= r.retained && slot <= r.newest-r.retained {
		return nil
	}
	if !r.seen || slot > r.newest {
		r.newest, r.seen = slot, true
		if r.newest >= r.retained {
			oldest := r.newest - r.retained + 1
			for s := range r.slots {
				if s < oldest {
					r.forget(s)
				}
			}
		}
	}
	st := r.slots[slot]
	if st == nil {
		st = &slotState{}
		r.slots[slot] = st
	}
	return st
}

// forget deletes every per-slot series of slot. Callers hold r.mu.
func (r *Recorder) forget(slot uint64) {
	l := prometheus.Labels{LabelSlot: strconv.FormatUint(slot, 10)}
	for _, v := range r.perSlot {
		v.DeletePartialMatch(l)
	}
	delete(r.slots, slot)
}

// BlockArrived records when slot's beacon block was first received (at
// gossip receive, before validation).
func (r *Recorder) BlockArrived(slot uint64, t time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.slot(slot)
	if st == nil || st.arrived {
		return
	}
	st.arrived, st.blockArrival = true, t
	r.blockArrival.WithLabelValues(strconv.FormatUint(slot, 10)).Set(unixSeconds(t))
}

// BlockInstalled records when slot's block was validated and applied, and
// observes the install delay from the arrival BlockArrived saw (no
// observation without an arrival, or if t precedes it).
func (r *Recorder) BlockInstalled(slot uint64, t time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.slot(slot)
	if st == nil || st.installed {
		return
	}
	st.installed = true
	r.installed.WithLabelValues(strconv.FormatUint(slot, 10)).Set(unixSeconds(t))
	if st.arrived && !t.Before(st.blockArrival) {
		r.installDelay.Observe(t.Sub(st.blockArrival).Seconds())
	}
}

// FirstArrival records when the first segment (or the whole message) of
// slot's payload was received; only the first call per slot counts.
func (r *Recorder) FirstArrival(slot uint64, t time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.slot(slot)
	if st == nil || st.first {
		return
	}
	st.first = true
	r.firstArrival.WithLabelValues(strconv.FormatUint(slot, 10)).Set(unixSeconds(t))
}

// Completed records when the complete payload of slot was reassembled and
// verified.
func (r *Recorder) Completed(slot uint64, t time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.slot(slot)
	if st == nil || st.completed {
		return
	}
	st.completed = true
	r.completed.WithLabelValues(strconv.FormatUint(slot, 10)).Set(unixSeconds(t))
}

// AddReceivedBytes adds n bytes of kind for slot's payload, to the per-slot
// gauge and to payload_diffusion_received_bytes_total. n ≤ 0 is ignored; an
// unknown kind panics, like a wrong label count does in client_golang. Bytes
// of a slot outside the retention window still count in the total.
func (r *Recorder) AddReceivedBytes(slot uint64, kind Kind, n int) {
	if kind != KindData && kind != KindControl {
		panic(fmt.Sprintf("metrics: AddReceivedBytes with unknown %v", kind))
	}
	if n <= 0 {
		return
	}
	r.bytesTotal.WithLabelValues(kind.String()).Add(float64(n))
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.slot(slot)
	if st == nil {
		return
	}
	st.bytes[kind] += uint64(n)
	r.receivedBytes.WithLabelValues(strconv.FormatUint(slot, 10), kind.String()).Set(float64(st.bytes[kind]))
}

// ReceivedBytesByNetworkCompletion records slot's received bytes of both
// kinds as they stand now, the moment the last honest node completed it
// (payload_diffusion_received_bytes_by_network_completion; the embedded
// devnet's driver calls it, a client has no such moment).
func (r *Recorder) ReceivedBytesByNetworkCompletion(slot uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.slot(slot)
	if st == nil {
		return
	}
	for _, k := range []Kind{KindData, KindControl} {
		r.netBytes.WithLabelValues(strconv.FormatUint(slot, 10), k.String()).Set(float64(st.bytes[k]))
	}
}

// AddUnattributedBytes adds n bytes of kind to
// payload_diffusion_received_bytes_total only: payload-topic bytes that
// cannot be attributed to a slot (e.g. IHAVE entries naming a whole-mode
// content id the node has not seen). n ≤ 0 is ignored; an unknown kind
// panics.
func (r *Recorder) AddUnattributedBytes(kind Kind, n int) {
	if kind != KindData && kind != KindControl {
		panic(fmt.Sprintf("metrics: AddUnattributedBytes with unknown %v", kind))
	}
	if n > 0 {
		r.bytesTotal.WithLabelValues(kind.String()).Add(float64(n))
	}
}

// SegmentReceived counts a valid segment of slot's payload: a distinct one,
// or a duplicate (a copy beyond the first). In whole mode the whole message
// counts as one segment.
func (r *Recorder) SegmentReceived(slot uint64, duplicate bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.slot(slot)
	if st == nil {
		return
	}
	s := strconv.FormatUint(slot, 10)
	if duplicate {
		st.duplicates++
		r.duplicates.WithLabelValues(s).Set(float64(st.duplicates))
		return
	}
	st.segments++
	r.segmentsReceived.WithLabelValues(s).Set(float64(st.segments))
}

// SegmentRejected counts a segment rejected for reason, one of Reasons; any
// other reason panics, so a typo cannot silently invent a series.
func (r *Recorder) SegmentRejected(reason string) {
	if !slices.Contains(Reasons, reason) {
		panic(fmt.Sprintf("metrics: SegmentRejected with unknown reason %q (want one of %v)", reason, Reasons))
	}
	r.rejected.WithLabelValues(reason).Inc()
}

// SegmentDeferred counts a segment the validator held until its block was
// installed.
func (r *Recorder) SegmentDeferred() { r.deferred.Inc() }

// Revealed records, on the builder, when slot's payload was handed to gossip
// (first segment or whole message) with its raw (SSZ) and compressed
// (snappy) sizes and its segment count (1 in whole mode).
func (r *Recorder) Revealed(slot uint64, t time.Time, rawSize, compressedSize, segments int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.slot(slot)
	if st == nil || st.reveal {
		return
	}
	st.reveal = true
	s := strconv.FormatUint(slot, 10)
	r.reveal.WithLabelValues(s).Set(unixSeconds(t))
	r.payloadSize.WithLabelValues(s, EncodingRaw).Set(float64(max(rawSize, 0)))
	r.payloadSize.WithLabelValues(s, EncodingCompressed).Set(float64(max(compressedSize, 0)))
	r.segmentsK.WithLabelValues(s).Set(float64(max(segments, 0)))
}

// RetainedSlots returns the retention window N.
func (r *Recorder) RetainedSlots() int {
	if r.retained > math.MaxInt {
		return math.MaxInt
	}
	return int(r.retained)
}
