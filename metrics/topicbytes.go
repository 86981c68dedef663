package metrics

import (
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// topicBytesFamily reads TopicBytesSeries, which must be a counter.
func (b *builder) topicBytesFamily(mf *dto.MetricFamily) {
	if mf.GetType() != dto.MetricType_COUNTER {
		b.fail(TopicBytesSeries, ErrWrongType, "declared %s, want counter", strings.ToLower(mf.GetType().String()))
		return
	}
	for _, m := range mf.GetMetric() {
		labels := make(map[string]string, len(m.GetLabel()))
		for _, lp := range m.GetLabel() {
			labels[lp.GetName()] = lp.GetValue()
		}
		b.topicBytes(labels, m.GetCounter().GetValue())
	}
}

// topicBytes adds one TopicBytesSeries sample to Snapshot.TopicBytes when
// its topic carries payloads (PayloadTopics); the series counts as present
// whatever its topic, so that a node exporting it for other topics only
// reads 0 payload bytes, not a missing series.
func (b *builder) topicBytes(labels map[string]string, v float64) {
	id := series(TopicBytesSeries, labels, "topic", "is_partial")
	n, ok := b.count(id, v)
	if !ok {
		return
	}
	b.snap.HasTopicBytes = true
	if slices.Contains(PayloadTopics, TopicName(labels["topic"])) {
		b.snap.TopicBytes += n
	}
}

// TopicName returns the topic name of a gossip topic string: the component
// between /eth2/<fork digest>/ and the encoding ("/eth2/0a1b2c3d/
// execution_payload/ssz_snappy" is "execution_payload"); a string of
// another shape is returned as it is.
func TopicName(topic string) string {
	parts := strings.Split(topic, "/")
	if len(parts) == 5 && parts[0] == "" && parts[1] == "eth2" {
		return parts[3]
	}
	return topic
}
