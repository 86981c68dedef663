package params

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"gopkg.in/yaml.v3"
)

// YAMLToJSON converts a network-params YAML document to the JSON object the
// Kurtosis SDK passes to the package. Integers keep their exact value —
// FAR_FUTURE epochs are 2^64-1, which a float64 round trip (as in YAML
// converters built on encoding/json numbers) would turn into 2^64.
func YAMLToJSON(data []byte) ([]byte, error) {
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("parse network params: %w", err)
	}
	if v == nil {
		v = map[string]any{}
	}
	norm, err := normalize(v, "")
	if err != nil {
		return nil, err
	}
	if _, ok := norm.(map[string]any); !ok {
		return nil, fmt.Errorf("convert network params: top level must be a map, got %T", norm)
	}
	out, err := json.Marshal(norm)
	if err != nil {
		return nil, fmt.Errorf("encode network params: %w", err)
	}
	return out, nil
}

// normalize turns yaml.v3's map[any]any (non-string keys) into JSON-able
// map[string]any and rejects the values JSON cannot carry, NaN and the
// infinities (.nan, .inf), naming their key. (Keys that collide as strings,
// 1 and "1", yaml.v3 already refuses.)
func normalize(v any, path string) (any, error) {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			n, err := normalize(e, path+"."+k)
			if err != nil {
				return nil, err
			}
			t[k] = n
		}
		return t, nil
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			ks := fmt.Sprint(k)
			n, err := normalize(e, path+"."+ks)
			if err != nil {
				return nil, err
			}
			m[ks] = n
		}
		return m, nil
	case []any:
		for i, e := range t {
			n, err := normalize(e, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			t[i] = n
		}
		return t, nil
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return nil, fmt.Errorf("convert network params: %s is %v, which JSON cannot carry", keyPath(path), t)
		}
		return t, nil
	default:
		return t, nil
	}
}

// keyPath names a value's key path for messages ("network_params.x").
func keyPath(path string) string { return strings.TrimPrefix(path, ".") }
