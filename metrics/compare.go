package metrics

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Compare parses two text expositions and reports how the series named by
// names (every contract series when names is empty) differ: nil when equal,
// otherwise an error listing the lines only in want ("-") and only in got
// ("+"). Label order, series order, sample timestamps and HELP text do not
// count as differences. Use it for golden-file tests of a client's exposition; use
// Parse when the values matter individually.
func Compare(got, want io.Reader, names ...string) error {
	if len(names) == 0 {
		names = Names()
	}
	g, err := normalizedText(got, names)
	if err != nil {
		return fmt.Errorf("compare metrics: got: %w", err)
	}
	w, err := normalizedText(want, names)
	if err != nil {
		return fmt.Errorf("compare metrics: want: %w", err)
	}
	if g == w {
		return nil
	}
	gl, wl := strings.Split(g, "\n"), strings.Split(w, "\n")
	var sb strings.Builder
	sb.WriteString("compare metrics: expositions differ:")
	for _, l := range wl {
		if !slices.Contains(gl, l) {
			sb.WriteString("\n- " + l)
		}
	}
	for _, l := range gl {
		if !slices.Contains(wl, l) {
			sb.WriteString("\n+ " + l)
		}
	}
	return errors.New(sb.String())
}

// normalizedText re-encodes the named families of r with sorted labels and
// series, so that equal content compares equal as text.
func normalizedText(r io.Reader, names []string) (string, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	sorted := slices.Clone(names)
	slices.Sort(sorted)
	for _, name := range slices.Compact(sorted) {
		mf, ok := families[name]
		if !ok {
			continue
		}
		mf.Help = nil // help wording is not part of the contract
		for _, m := range mf.Metric {
			slices.SortFunc(m.Label, func(a, b *dto.LabelPair) int { return cmp.Compare(a.GetName(), b.GetName()) })
			m.TimestampMs = nil
		}
		slices.SortFunc(mf.Metric, func(a, b *dto.Metric) int { return cmp.Compare(labelKey(a), labelKey(b)) })
		if _, err := expfmt.MetricFamilyToText(&buf, mf); err != nil {
			return "", fmt.Errorf("encode %s: %w", name, err)
		}
	}
	return buf.String(), nil
}

func labelKey(m *dto.Metric) string {
	var sb strings.Builder
	for _, lp := range m.GetLabel() {
		sb.WriteString(lp.GetName())
		sb.WriteByte(0)
		sb.WriteString(lp.GetValue())
		sb.WriteByte(0)
	}
	return sb.String()
}
