package diffusion

import (
	"fmt"
	"sort"
)

// Role is how a node behaves towards payload messages. Roles are data: a
// policy consults the hooks below wherever its protocol forwards, answers
// or announces, so that a new role is a new value, not a branch in every
// policy.
type Role struct {
	// Name is the role as results and reports show it ("relay").
	Name string
	// Forward: the node relays payload messages it accepted.
	Forward bool
	// Answer: the node answers requests for messages it holds (IWANT,
	// pulls).
	Answer bool
	// Announce: the node sends inventory and acknowledgements (IHAVE,
	// IDONTWANT, announcements).
	Announce bool
}

// The roles of the design's stress list. Each adds one refusal to the one
// before it.
var (
	// Relay is the honest node: it forwards, answers and announces.
	Relay = Role{Name: "relay", Forward: true, Answer: true, Announce: true}
	// Withholder announces what it holds and forwards, but never answers a
	// request.
	Withholder = Role{Name: "withholder", Forward: true, Answer: false, Announce: true}
	// Silent also forwards nothing.
	Silent = Role{Name: "silent", Forward: false, Answer: false, Announce: true}
	// Mute also sends no inventory or acknowledgement.
	Mute = Role{Name: "mute", Forward: false, Answer: false, Announce: false}
)

var roles = map[string]Role{Relay.Name: Relay, Withholder.Name: Withholder, Silent.Name: Silent, Mute.Name: Mute}

// RoleNamed returns the role called name.
func RoleNamed(name string) (Role, error) {
	if r, ok := roles[name]; ok {
		return r, nil
	}
	return Role{}, fmt.Errorf("unknown role %q (want one of %v)", name, RoleNames())
}

// RoleNames lists the roles, sorted.
func RoleNames() []string {
	out := make([]string, 0, len(roles))
	for n := range roles {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Honest reports whether r is the honest relay (verdicts cover honest nodes
// only).
func (r Role) Honest() bool { return r == Relay }

// Loss names what a fault may drop on arrival.
type Loss int

// What Env.Drop may drop.
const (
	// LossData is one delivery of payload data (a message, a part).
	LossData Loss = iota
	// LossRequest is one request (an IWANT, a WANT).
	LossRequest
)
