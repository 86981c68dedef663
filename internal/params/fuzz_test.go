package params_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/segdiff/segdiff/internal/params"
)

// FuzzCheck: any input yields problems (never a panic), each naming the file
// and a positive line.
func FuzzCheck(f *testing.F) {
	f.Add([]byte(base))
	f.Add([]byte("participants: [{count: -1}]\nsegdiff: {link_classes: {overrides: [{participant: 9}]}}\n"))
	f.Add([]byte("a: &x [1]\nb: *x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, p := range params.New().Check("f.yaml", data) {
			if p.File != "f.yaml" || p.Line < 0 || !strings.HasPrefix(p.String(), "f.yaml:") {
				t.Fatalf("malformed problem %+v", p)
			}
		}
	})
}

// FuzzYAMLToJSON: whatever converts is valid JSON.
func FuzzYAMLToJSON(f *testing.F) {
	f.Add([]byte("gloas_fork_epoch: 18446744073709551615\n"))
	f.Add([]byte(base))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := params.YAMLToJSON(data)
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("invalid JSON %q from %q", out, data)
		}
	})
}
