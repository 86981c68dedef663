package devnet

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// StressKeys are the conditions a stress configuration may set, from the
// design's stress list, with what each value is: a share of non-builder
// nodes, a probability, a count, a spread or a size.
var StressKeys = map[string]string{
	"withholders":   "share of non-builder nodes that announce and never answer (0..0.5)",
	"silent":        "share that also forward nothing (0..0.5)",
	"mute":          "share that also announce nothing (0..0.5)",
	"omit":          "parts of each payload the builder never sends (count)",
	"loss-data":     "probability a payload delivery is dropped on arrival (0..1)",
	"loss-requests": "probability a request is dropped on arrival (0..1)",
	"uplink-spread": "uplinks drawn within ±this share of their class's rate, same mean (0..0.9)",
	"payload-size":  "raw payload size in bytes (128 KiB–2 MiB in the stress list)",
}

// ParseStress reads a stress configuration, "withholders=50%, loss-data=5%",
// and returns its canonical form (keys sorted, values as plain numbers:
// "loss-data=0.05,withholders=0.5") and the values by key. Percentages are
// accepted for every key but omit and payload-size.
func ParseStress(spec string) (string, map[string]float64, error) {
	values := map[string]float64{}
	if strings.TrimSpace(spec) == "" {
		return "", values, nil
	}
	for _, term := range strings.Split(spec, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(term), "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" || v == "" {
			return "", nil, fmt.Errorf("stress %q: term %q is not key=value", spec, term)
		}
		if _, known := StressKeys[k]; !known {
			keys := make([]string, 0, len(StressKeys))
			for key := range StressKeys {
				keys = append(keys, key)
			}
			sort.Strings(keys)
			return "", nil, fmt.Errorf("stress %q: unknown condition %q (known: %s)", spec, k, strings.Join(keys, ", "))
		}
		if _, dup := values[k]; dup {
			return "", nil, fmt.Errorf("stress %q: %s set twice", spec, k)
		}
		count := k == "omit" || k == "payload-size"
		pct := strings.HasSuffix(v, "%")
		if pct && count {
			return "", nil, fmt.Errorf("stress %q: %s is a count, not a percentage", spec, k)
		}
		f, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
		if err != nil || f < 0 {
			return "", nil, fmt.Errorf("stress %q: %s=%q is not a non-negative number", spec, k, v)
		}
		if pct {
			f /= 100
		}
		if count && f != float64(int64(f)) {
			return "", nil, fmt.Errorf("stress %q: %s=%q is not a whole number", spec, k, v)
		}
		values[k] = f
	}
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	terms := make([]string, len(keys))
	for i, k := range keys {
		terms[i] = k + "=" + strconv.FormatFloat(values[k], 'f', -1, 64)
	}
	return strings.Join(terms, ","), values, nil
}
