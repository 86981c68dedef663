package stress_test

import (
	"strings"
	"testing"

	"github.com/segdiff/segdiff/diffusion/role"
	"github.com/segdiff/segdiff/internal/stress"
)

func TestThinDownlink(t *testing.T) {
	for up, want := range map[int]int{10: 20, 5: 10, 20: 100, 50: 100} {
		if got := stress.ThinDownlink(up); got != want {
			t.Errorf("ThinDownlink(%d) = %d, want %d", up, got, want)
		}
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		text, want, wantErr string
	}{
		{text: "", want: ""},
		{text: "withholder=50%, loss-data=5%", want: "loss-data=0.05,withholder=0.5"},
		{text: "omit=4", want: "omit=4"},
		{text: "payload-size=131072,uplink-spread=0.8", want: "payload-size=131072,uplink-spread=0.8"},
		{text: "silent=25%,mute=25%", want: "mute=0.25,silent=0.25"},
		{text: "withholdr=50%", wantErr: `unknown stress condition "withholdr" (known: withholder, silent, mute, unacking-withholder, under-reporter, padding-under-reporter, loss-data`},
		{text: "withholdr=50%", wantErr: "did you mean withholder?"},
		{text: "omit=4%", wantErr: "omit is a whole number, not a percentage"},
		{text: "omit=2.5", wantErr: "omit=2.5: want a whole number"},
		{text: "silent", wantErr: "is not condition=value"},
		{text: "mute=-1", wantErr: "want a non-negative number"},
		{text: "mute=0.1,mute=0.2", wantErr: "mute set twice"},
		{text: "withholder=60%", wantErr: "want a share 0..0.5"},
		{text: "loss-data=1", wantErr: "want a probability 0 ≤ p < 1"},
		{text: "uplink-spread=95%", wantErr: "want a spread 0..0.9"},
		{text: "payload-size=0", wantErr: "want a size above 0 bytes"},
		{text: "withholder=0.5,silent=0.5,mute=0.5", wantErr: "the role shares add up to 1.5"},
		{text: "uplink-mbps=10", want: "uplink-mbps=10"},
		{text: "uplink-mbps=0", wantErr: "want a rate 1..100000 Mbps"},
		{text: "uplink-mbps=12.5", wantErr: "want a whole number"},
		{text: "uplink-mbps=50%", wantErr: "uplink-mbps is a whole number, not a percentage"},
	}
	for _, tt := range tests {
		got, err := stress.Parse(tt.text)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Parse(%q) = %v, want error %q", tt.text, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got.String() != tt.want {
			t.Errorf("Parse(%q) = %q, %v; want %q", tt.text, got, err, tt.want)
		}
	}
}

// A role brings its own condition, and a registered condition is known at
// once; both go again when unregistered.
func TestConditionsFollowTheRolesAndRegistrations(t *testing.T) {
	lazy := role.Role{Name: "lazy", Doc: "announces late", Forward: true, Answer: true}
	if err := role.Register(lazy); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { role.Unregister(lazy.Name) })
	if err := stress.Register(stress.Condition{Name: "jitter", Doc: "extra latency jitter", Kind: stress.Spread}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stress.Unregister("jitter") })
	for _, name := range []string{"lazy", "jitter"} {
		if _, ok := stress.Lookup(name); !ok {
			t.Errorf("condition %s is not known after registering it", name)
		}
	}
	if c, _ := stress.Lookup("lazy"); !c.Role || c.Kind != stress.Share {
		t.Errorf("the lazy role's condition is %+v, want a role share", c)
	}
	set, err := stress.Parse("lazy=10%, jitter=0.2")
	if err != nil || set.String() != "jitter=0.2,lazy=0.1" {
		t.Fatalf("Parse = %v, %v", set, err)
	}
	if err := stress.Register(stress.Condition{Name: "lazy"}); err == nil {
		t.Error("a condition named after a role registered")
	}
	role.Unregister(lazy.Name)
	stress.Unregister("jitter")
	if _, err := stress.Parse("lazy=10%"); err == nil {
		t.Error("an unregistered role's condition is still known")
	}
	stress.Unregister(stress.LossData.Name)
	if _, ok := stress.Lookup(stress.LossData.Name); !ok {
		t.Error("Unregister removed a built-in condition")
	}
}
