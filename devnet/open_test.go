package devnet

import "testing"

func TestConfigString(t *testing.T) {
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{Mode: ModeSegmented, Preset: "ci"}, "mode=segmented nodes=default seed=default preset=ci"},
		{Config{Mode: ModeWhole, Nodes: 64, Seed: 7, Preset: "study-500"}, "mode=whole nodes=64 seed=7 preset=study-500"},
		{Config{Mode: ModeSegmentedBatch, Seed: -1}, "mode=segmented-batch nodes=default seed=-1 preset="},
	}
	for _, tt := range tests {
		if got := tt.cfg.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.cfg, got, tt.want)
		}
	}
}

func TestParseMode(t *testing.T) {
	for _, s := range []string{"whole", "segmented", "segmented-batch"} {
		if m, err := ParseMode(s); err != nil || string(m) != s {
			t.Errorf("ParseMode(%q) = %q, %v", s, m, err)
		}
	}
	if _, err := ParseMode("flood"); err == nil {
		t.Error(`ParseMode("flood") = nil error, want one naming the mode`)
	}
}
