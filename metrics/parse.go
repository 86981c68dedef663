package metrics

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	segmode "github.com/segdiff/segdiff/diffusion/mode"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Sample is one series value as a PromQL instant query returns it: Name is
// the metric name (histograms appear as their _bucket, _sum and _count
// series), Labels the rest of its labels (extra labels such as instance or
// segdiff_node are ignored).
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// Parse reads a Prometheus text exposition (a node's /metrics body) into a
// Snapshot. Series outside the payload_diffusion_ namespace are ignored;
// unknown names inside it are listed in Snapshot.Unknown. Errors wrap the
// sentinels of this package and read "parse metrics from <source>: ...",
// listing every bad series.
func Parse(r io.Reader, source string) (*Snapshot, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parse metrics from %s: %w", source, err)
	}
	b := newBuilder(source)
	names := make([]string, 0, len(families))
	for name := range families {
		names = append(names, name)
	}
	slices.Sort(names) // deterministic error order
	for _, name := range names {
		b.family(families[name])
	}
	return b.finish()
}

// FromSamples builds a Snapshot from samples, as PromQL instant queries
// return them, with the same checks as Parse (except metric types, which
// PromQL does not carry). Errors read "parse metrics from <source>: ...".
func FromSamples(source string, samples []Sample) (*Snapshot, error) {
	b := newBuilder(source)
	for _, s := range samples {
		b.sample(s.Name, s.Labels, s.Value)
	}
	return b.finish()
}

// builder accumulates series into a Snapshot, collecting every error.
type builder struct {
	snap *Snapshot
	errs []error
	hist struct{ count, sum bool }
}

func newBuilder(source string) *builder {
	return &builder{snap: &Snapshot{
		Source:  source,
		Origin:  OriginContract,
		Slots:   make(map[uint64]*Slot),
		Totals:  Totals{Rejected: make(map[string]uint64)},
		present: make(map[string]bool),
	}}
}

func (b *builder) finish() (*Snapshot, error) {
	if len(b.errs) > 0 {
		return nil, fmt.Errorf("parse metrics from %s: %w", b.snap.Source, errors.Join(b.errs...))
	}
	slices.Sort(b.snap.Unknown)
	b.snap.Unknown = slices.Compact(b.snap.Unknown)
	slices.SortFunc(b.snap.Totals.InstallDelay.Buckets, func(x, y Bucket) int {
		switch {
		case x.UpperBound < y.UpperBound:
			return -1
		case x.UpperBound > y.UpperBound:
			return 1
		}
		return 0
	})
	return b.snap, nil
}

func (b *builder) fail(series string, sentinel error, format string, args ...any) {
	b.errs = append(b.errs, fmt.Errorf("%s: %w: %s", series, sentinel, fmt.Sprintf(format, args...)))
}

var dtoType = map[Type]dto.MetricType{
	TypeGauge:     dto.MetricType_GAUGE,
	TypeCounter:   dto.MetricType_COUNTER,
	TypeHistogram: dto.MetricType_HISTOGRAM,
}

// family checks a parsed family's type and feeds its samples.
func (b *builder) family(mf *dto.MetricFamily) {
	name := mf.GetName()
	if name == TopicBytesSeries {
		b.topicBytesFamily(mf)
		return
	}
	if name == ReceiveBlockSeries {
		b.receiveBlockFamily(mf)
		return
	}
	if !strings.HasPrefix(name, Namespace) {
		return
	}
	def, ok := Lookup(name)
	if !ok {
		b.snap.Unknown = append(b.snap.Unknown, name)
		return
	}
	if want := dtoType[def.Type]; mf.GetType() != want {
		b.fail(name, ErrWrongType, "declared %s, want %s", strings.ToLower(mf.GetType().String()), def.Type)
		return
	}
	for _, m := range mf.GetMetric() {
		labels := make(map[string]string, len(m.GetLabel()))
		for _, lp := range m.GetLabel() {
			labels[lp.GetName()] = lp.GetValue()
		}
		switch def.Type {
		case TypeGauge:
			b.sample(name, labels, m.GetGauge().GetValue())
		case TypeCounter:
			b.sample(name, labels, m.GetCounter().GetValue())
		case TypeHistogram:
			h := m.GetHistogram()
			b.sample(name+"_count", labels, float64(h.GetSampleCount()))
			b.sample(name+"_sum", labels, h.GetSampleSum())
			for _, bk := range h.GetBucket() {
				bl := map[string]string{model.BucketLabel: strconv.FormatFloat(bk.GetUpperBound(), 'g', -1, 64)}
				b.sample(name+"_bucket", bl, float64(bk.GetCumulativeCount()))
			}
		}
	}
}

// series renders name{labels} for messages, contract labels only.
func series(name string, labels map[string]string, keys ...string) string {
	var sb strings.Builder
	sb.WriteString(name)
	first := true
	for _, k := range keys {
		v, ok := labels[k]
		if !ok {
			continue
		}
		if first {
			sb.WriteByte('{')
			first = false
		} else {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, "%s=%q", k, v)
	}
	if !first {
		sb.WriteByte('}')
	}
	return sb.String()
}

// sample feeds one series value.
func (b *builder) sample(name string, labels map[string]string, v float64) {
	if name == TopicBytesSeries {
		b.topicBytes(labels, v)
		return
	}
	switch name {
	case ReceiveBlockSeries + "_sum":
		b.receiveBlock(v, 0, true, false)
		return
	case ReceiveBlockSeries + "_count":
		b.receiveBlock(0, v, false, true)
		return
	}
	if !strings.HasPrefix(name, Namespace) {
		return
	}
	if base, ok := strings.CutSuffix(name, "_bucket"); ok && base == NameBlockInstallDelay {
		b.bucket(labels, v)
		return
	}
	if base, ok := strings.CutSuffix(name, "_sum"); ok && base == NameBlockInstallDelay {
		b.histSum(v)
		return
	}
	if base, ok := strings.CutSuffix(name, "_count"); ok && base == NameBlockInstallDelay {
		b.histCount(v)
		return
	}
	def, ok := Lookup(name)
	if !ok || def.Type == TypeHistogram {
		b.snap.Unknown = append(b.snap.Unknown, name)
		return
	}
	id := series(name, labels, def.Labels...)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		b.fail(id, ErrBadValue, "value %v", v)
		return
	}
	switch name {
	case NameInfo:
		b.info(id, labels, v)
	case NameReceivedBytesTotal:
		n, ok := b.count(id, v)
		if !ok {
			return
		}
		switch k := labels[LabelKind]; k {
		case "data":
			b.total(id, name+"/data", &b.snap.Totals.DataBytes, n)
		case "control":
			b.total(id, name+"/control", &b.snap.Totals.ControlBytes, n)
		default:
			b.fail(id, ErrBadLabel, "kind %q, want data or control", k)
			return
		}
	case NameSegmentsRejectedTotal:
		n, ok := b.count(id, v)
		if !ok {
			return
		}
		reason := labels[LabelReason]
		if !slices.Contains(Reasons, reason) {
			b.fail(id, ErrBadLabel, "reason %q, want one of %v", reason, Reasons)
			return
		}
		if _, dup := b.snap.Totals.Rejected[reason]; dup {
			b.fail(id, ErrDuplicate, "seen twice")
			return
		}
		b.snap.Totals.Rejected[reason] = n
		b.snap.present[name] = true
	case NameSegmentsDeferredTotal:
		if n, ok := b.count(id, v); ok {
			b.total(id, name, &b.snap.Totals.Deferred, n)
		}
	default:
		b.perSlot(id, name, labels, v)
	}
}

// total sets a counter-valued total once; key tells the series apart in the
// duplicate check.
func (b *builder) total(id, key string, dst *uint64, n uint64) {
	if b.snap.present[key] {
		b.fail(id, ErrDuplicate, "seen twice")
		return
	}
	b.snap.present[key] = true
	name, _, _ := strings.Cut(key, "/")
	b.snap.present[name] = true
	*dst = n
}

func (b *builder) info(id string, labels map[string]string, v float64) {
	if b.snap.Info.Present {
		b.fail(id, ErrDuplicate, "more than one info series")
		return
	}
	if v != 1 {
		b.fail(id, ErrBadValue, "value %v, want 1", v)
		return
	}
	mode := labels[LabelMode]
	if _, ok := segmode.Lookup(segmode.Mode(mode)); !ok {
		b.fail(id, ErrBadLabel, "mode %q, want one of %v", mode, segmode.Names())
		return
	}
	b.snap.Info = Info{Mode: mode, Format: labels[LabelFormat], Client: labels[LabelClient], Present: true}
	b.snap.present[NameInfo] = true
}

// count converts a whole, non-negative value.
func (b *builder) count(id string, v float64) (uint64, bool) {
	if v < 0 || v != math.Trunc(v) || v >= 1<<64 {
		b.fail(id, ErrBadValue, "value %v is not a count", v)
		return 0, false
	}
	return uint64(v), true
}

func (b *builder) bucket(labels map[string]string, v float64) {
	id := series(NameBlockInstallDelay+"_bucket", labels, model.BucketLabel)
	le, err := strconv.ParseFloat(labels[model.BucketLabel], 64)
	if err != nil || math.IsNaN(le) {
		b.fail(id, ErrBadLabel, "le %q is not a bucket bound", labels[model.BucketLabel])
		return
	}
	n, ok := b.count(id, v)
	if !ok || math.IsInf(le, +1) { // +Inf equals _count
		return
	}
	h := &b.snap.Totals.InstallDelay
	for _, bk := range h.Buckets {
		if bk.UpperBound == le {
			b.fail(id, ErrDuplicate, "seen twice")
			return
		}
	}
	h.Buckets = append(h.Buckets, Bucket{UpperBound: le, Count: n})
	b.snap.present[NameBlockInstallDelay] = true
}

func (b *builder) histSum(v float64) {
	id := NameBlockInstallDelay + "_sum"
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		b.fail(id, ErrBadValue, "value %v", v)
		return
	}
	if b.hist.sum {
		b.fail(id, ErrDuplicate, "seen twice")
		return
	}
	b.hist.sum = true
	b.snap.Totals.InstallDelay.Sum = v
	b.snap.present[NameBlockInstallDelay] = true
}

func (b *builder) histCount(v float64) {
	id := NameBlockInstallDelay + "_count"
	n, ok := b.count(id, v)
	if !ok {
		return
	}
	if b.hist.count {
		b.fail(id, ErrDuplicate, "seen twice")
		return
	}
	b.hist.count = true
	b.snap.Totals.InstallDelay.Count = n
	b.snap.present[NameBlockInstallDelay] = true
}

// parseSlot accepts a canonical decimal slot number only, so "07" and "7"
// cannot name one slot twice.
func parseSlot(s string) (uint64, bool) {
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || strconv.FormatUint(n, 10) != s {
		return 0, false
	}
	return n, true
}

// fromUnixSeconds converts float Unix seconds at millisecond precision.
func fromUnixSeconds(v float64) time.Time {
	return time.UnixMilli(int64(math.Round(v * 1000))).UTC()
}

func (b *builder) perSlot(id, name string, labels map[string]string, v float64) {
	raw, ok := labels[LabelSlot]
	if !ok {
		b.fail(id, ErrBadLabel, "no slot label")
		return
	}
	slot, ok := parseSlot(raw)
	if !ok {
		b.fail(id, ErrBadLabel, "slot %q is not a decimal slot number", raw)
		return
	}
	var f field
	switch name {
	case NamePayloadSize:
		switch e := labels[LabelEncoding]; e {
		case EncodingRaw:
			f = fRawSize
		case EncodingCompressed:
			f = fCompressedSize
		default:
			b.fail(id, ErrBadLabel, "encoding %q, want raw or compressed", e)
			return
		}
	case NameReceivedBytes, NameNetworkCompletionBytes:
		fs := nameFields[name]
		switch k := labels[LabelKind]; k {
		case "data":
			f = fs[0]
		case "control":
			f = fs[1]
		default:
			b.fail(id, ErrBadLabel, "kind %q, want data or control", k)
			return
		}
	default:
		f = nameFields[name][0]
	}
	st := b.snap.Slots[slot]
	if st == nil {
		st = &Slot{Number: slot}
		b.snap.Slots[slot] = st
	}
	if st.present[f] {
		b.fail(id, ErrDuplicate, "seen twice")
		return
	}
	switch f {
	case fReveal, fBlockArrival, fBlockInstalled, fFirstArrival, fCompleted:
		if v <= 0 || v > 1e11 {
			b.fail(id, ErrBadValue, "timestamp %v is not Unix seconds", v)
			return
		}
		*st.timeField(f) = fromUnixSeconds(v)
	default:
		n, ok := b.count(id, v)
		if !ok {
			return
		}
		*st.countField(f) = n
	}
	st.present[f] = true
}

func (s *Slot) timeField(f field) *time.Time {
	switch f {
	case fReveal:
		return &s.Reveal
	case fBlockArrival:
		return &s.BlockArrival
	case fBlockInstalled:
		return &s.BlockInstalled
	case fFirstArrival:
		return &s.FirstArrival
	case fCompleted:
		return &s.Completed
	case fGossip:
		return &s.GossipValid
	}
	panic("metrics: not a time field")
}

func (s *Slot) countField(f field) *uint64 {
	switch f {
	case fRawSize:
		return &s.RawSize
	case fCompressedSize:
		return &s.CompressedSize
	case fSegmentCount:
		return &s.SegmentCount
	case fDataBytes:
		return &s.DataBytes
	case fControlBytes:
		return &s.ControlBytes
	case fSegments:
		return &s.Segments
	case fDuplicates:
		return &s.Duplicates
	case fNetDataBytes:
		return &s.DataBytesByNetworkCompletion
	case fNetControlBytes:
		return &s.ControlBytesByNetworkCompletion
	}
	panic("metrics: not a count field")
}
