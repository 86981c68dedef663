package diffusion

import "github.com/segdiff/segdiff/diffusion/role"

// Role is how a node behaves towards payload messages (package role holds
// the list). A policy consults its capabilities wherever its protocol
// forwards, answers or announces, so that a new role is a new value, not a
// branch in every policy.
type Role = role.Role

// The roles of the design's stress list (package role).
var (
	Relay      = role.Relay
	Withholder = role.Withholder
	Silent     = role.Silent
	Mute       = role.Mute
)

// Loss names what a fault may drop on arrival.
type Loss int

// What Env.Drop may drop.
const (
	// LossData is one delivery of payload data (a message, a part).
	LossData Loss = iota
	// LossRequest is one request (an IWANT, a WANT).
	LossRequest
)
