package embedded

import (
	"slices"
	"testing"

	"github.com/segdiff/segdiff/internal/devnet"
)

func TestSimArgsWriteStressAsPlainNumbers(t *testing.T) {
	tests := []struct {
		stress string
		want   []string
	}{
		{"payload-size=2097152", []string{"--payload-size", "2097152"}},
		{"payload-size=131072, omit=4", []string{"--omit", "4", "--payload-size", "131072"}},
		{"loss-data=5%", []string{"--loss-data", "0.05"}},
		{"withholders=50%,mute=0.25", []string{"--mute", "0.25", "--withholders", "0.5"}},
	}
	for _, tt := range tests {
		t.Run(tt.stress, func(t *testing.T) {
			args, err := simArgs(devnet.Config{Mode: devnet.ModeSegmented, Seed: 9, Stress: tt.stress}, PresetCI, "e.json")
			if err != nil {
				t.Fatal(err)
			}
			head := []string{"sim", "--preset", PresetCI, "--serve", "127.0.0.1:0", "--endpoints", "e.json", "--mode", "segmented", "--seed", "9"}
			if !slices.Equal(args, append(head, tt.want...)) {
				t.Errorf("simArgs = %q, want %q then %q", args, head, tt.want)
			}
		})
	}
	if _, err := simArgs(devnet.Config{Stress: "withholders"}, PresetCI, "e.json"); err == nil {
		t.Error("simArgs accepted a stress term without a value")
	}
}
