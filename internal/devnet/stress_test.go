package devnet_test

import (
	"strings"
	"testing"

	"github.com/segdiff/segdiff/internal/devnet"
)

func TestParseStress(t *testing.T) {
	tests := []struct {
		spec, want, wantErr string
	}{
		{spec: "", want: ""},
		{spec: "withholders=50%, loss-data=5%", want: "loss-data=0.05,withholders=0.5"},
		{spec: "omit=4", want: "omit=4"},
		{spec: "payload-size=131072,uplink-spread=0.8", want: "payload-size=131072,uplink-spread=0.8"},
		{spec: "withholdrs=50%", wantErr: `unknown condition "withholdrs" (known: loss-data,`},
		{spec: "omit=4%", wantErr: "omit is a count"},
		{spec: "omit=2.5", wantErr: "not a whole number"},
		{spec: "silent", wantErr: "is not key=value"},
		{spec: "mute=-1", wantErr: "not a non-negative number"},
		{spec: "mute=1,mute=2", wantErr: "mute set twice"},
	}
	for _, tt := range tests {
		got, _, err := devnet.ParseStress(tt.spec)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseStress(%q) = %v, want error %q", tt.spec, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseStress(%q) = %q, %v; want %q", tt.spec, got, err, tt.want)
		}
	}
}
