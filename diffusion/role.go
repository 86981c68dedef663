package diffusion

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

// Relay is the honest node: it forwards, answers and announces.
var Relay = Role{Name: "relay", Forward: true, Answer: true, Announce: true}
