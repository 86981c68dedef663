package devnet

import (
	"errors"
	"testing"

	"github.com/segdiff/segdiff/internal/stress"
)

func TestConfigString(t *testing.T) {
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{Mode: ModeSegmented, Preset: "ci"}, "mode=segmented nodes=default seed=default preset=ci"},
		{Config{Mode: ModeWhole, Nodes: 64, Seed: 7, Preset: "study-500"}, "mode=whole nodes=64 seed=7 preset=study-500"},
		{Config{Mode: ModeSegmentedBatch, Seed: -1}, "mode=segmented-batch nodes=default seed=-1 preset="},
		// The stress in its canonical form: the same stress written in
		// another order is the same devnet.
		{Config{Mode: "tier2", Preset: "ci", Stress: stress.Set{"withholder": 0.5, "loss-data": 0.05}},
			"mode=tier2 nodes=default seed=default preset=ci stress=loss-data=0.05,withholder=0.5"},
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

func TestCheckConfig(t *testing.T) {
	errUnknown := errors.New("unknown preset")
	Register("test-presets", nil, WithConfigCheck(func(cfg Config) error {
		if cfg.Preset != "small" {
			return errUnknown
		}
		return nil
	}))
	Register("test-no-presets", nil)
	tests := []struct {
		name, backend, preset string
		wantErr               error
	}{
		{name: "known preset", backend: "test-presets", preset: "small"},
		{name: "unknown preset", backend: "test-presets", preset: "smal", wantErr: errUnknown},
		{name: "backend without a check accepts any", backend: "test-no-presets", preset: "anything"},
		{name: "unknown backend", backend: "test-nobody", preset: "small", wantErr: ErrUnknownBackend},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckConfig(tt.backend, Config{Preset: tt.preset})
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Errorf("CheckConfig(%q, preset %q) = %v, want %v", tt.backend, tt.preset, err, tt.wantErr)
			}
		})
	}
}

func TestSkipReason(t *testing.T) {
	Register("skip-test", nil, WithSkip(func(cfg Config) string {
		if cfg.Mode == ModeWhole {
			return "runs segmented"
		}
		return ""
	}))
	Register("no-skip-test", nil)
	tests := []struct {
		backend string
		cfg     Config
		want    string
	}{
		{"skip-test", Config{Mode: ModeWhole}, "runs segmented"},
		{"skip-test", Config{Mode: ModeSegmented}, ""},
		{"no-skip-test", Config{Mode: ModeWhole}, ""},
		{"unknown-backend", Config{Mode: ModeWhole}, ""},
	}
	for _, tt := range tests {
		if got := SkipReason(tt.backend, tt.cfg); got != tt.want {
			t.Errorf("SkipReason(%s, %s) = %q, want %q", tt.backend, tt.cfg, got, tt.want)
		}
	}
}
