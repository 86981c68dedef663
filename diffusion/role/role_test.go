package role_test

import (
	"slices"
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
