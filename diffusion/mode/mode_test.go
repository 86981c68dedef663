package mode_test

import (
	"strings"
	"testing"

	"github.com/segdiff/segdiff/diffusion/mode"
)

func TestParse(t *testing.T) {
	for _, n := range mode.Names() {
		if m, err := mode.Parse(n); err != nil || string(m) != n {
			t.Errorf("Parse(%q) = %q, %v", n, m, err)
		}
	}
	_, err := mode.Parse("flood")
	if err == nil || !strings.Contains(err.Error(), `unknown diffusion mode "flood" (want one of whole, whole-pulls, whole-paced, segmented`) {
		t.Errorf("Parse(flood) = %v", err)
	}
	if _, ok := mode.Lookup(mode.Default); !ok {
		t.Error("the default mode is not in the table")
	}
}
