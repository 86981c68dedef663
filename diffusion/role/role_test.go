package role_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/segdiff/segdiff/diffusion/role"
)

// A registered role joins the list after the package's own and goes again
// when unregistered; the package's own roles cannot be unregistered.
func TestRegisterAndUnregister(t *testing.T) {
	before := role.Names()
	lazy := role.Role{Name: "lazy", Doc: "forwards, never announces", Forward: true, Answer: true}
	if err := role.Register(lazy); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { role.Unregister(lazy.Name) })
	if got := role.Names(); !slices.Equal(got, append(slices.Clone(before), "lazy")) {
		t.Errorf("after Register: %q", got)
	}
	if err := role.Register(lazy); err == nil {
		t.Error("a role registered twice")
	}
	for _, r := range role.All() {
		role.Unregister(r.Name)
	}
	if got := role.Names(); !slices.Equal(got, before) {
		t.Errorf("unregistering every role left %q, want the package's own %q", got, before)
	}
}

// Register refuses a role that is the relay under another name, and one
// that pads reports it does not tailor.
func TestRegisterRefuses(t *testing.T) {
	tests := []struct {
		name    string
		r       role.Role
		wantErr string
	}{
		{"the relay renamed", role.Role{Name: "honest", Forward: true, Answer: true, Announce: true, Acknowledge: true}, "refuses nothing"},
		{"an upper-case name", role.Role{Name: "Lazy", Forward: true}, "lower-case name"},
		{"padding without under-reporting", role.Role{Name: "padder", Announce: true, UnderReportPad: 1}, "UnderReportPad 1"},
		{"negative padding", role.Role{Name: "padder", Announce: true, UnderReport: true, UnderReportPad: -1}, "UnderReportPad -1"},
		{"a built-in name", role.PaddingUnderReporter, "registered twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := role.Register(tt.r)
			if err == nil {
				role.Unregister(tt.r.Name)
				t.Fatalf("Register(%+v) succeeded", tt.r)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Register: %v, want it to say %q", err, tt.wantErr)
			}
		})
	}
}
