// Package role is the one list of how a node may behave towards payload
// messages: the honest relay and the refusing roles of the design's stress
// list. Roles are data. A policy consults a role's capabilities wherever its
// protocol forwards, answers or announces; the suite counts only honest
// receivers in its verdicts; the embedded devnet places each adversarial
// role's share of the nodes (a stress condition named after the role); the
// network-params checker and the client manifest accept a participant's
// segdiff.role by this list. A new role is one Register call (and, for
// real clients, its flags in client-patches/clients.yaml).
//
// The package has no dependencies beyond the standard library, so that
// every layer can read the list.
package role

import (
	"fmt"
	"regexp"
	"slices"
	"sync"
)

// Role is how a node behaves towards payload messages.
type Role struct {
	// Name is the role as results, params files and stress conditions
	// name it ("withholder").
	Name string
	// Doc says what the role refuses, in a phrase.
	Doc string
	// Forward: the node relays payload messages it accepted.
	Forward bool
	// Answer: the node answers requests for messages it holds (IWANT,
	// pulls).
	Answer bool
	// Announce: the node sends inventory and acknowledgements (IHAVE,
	// IDONTWANT, announcements).
	Announce bool
	// Acknowledge: the node acknowledges what it received, where a policy
	// asks for acknowledgements (tier 4's window, whole-paced's copies in
	// flight, both released by the receiver's acknowledgement). A node that
	// announces nothing acknowledges nothing either. Policies without
	// acknowledgements ignore it.
	Acknowledge bool
	// UnderReport: the node tells each peer that pushes to it that it holds
	// only what that peer sent (a tailored under-reporter drawing pushes it
	// does not pass on), where a policy keeps per-peer state (tier 4).
	// Policies without per-peer state ignore it.
	UnderReport bool
	// UnderReportPad is how many parts more than a pusher sent an
	// under-reporter admits to it: the lowest-index parts it holds that
	// the pusher did not send. A report of only what the pusher wrote
	// gives an under-reporter away (tier 4's echo demotion); one part more
	// hides it while it still looks nearly as far behind. Zero without
	// UnderReport.
	UnderReportPad int
}

// The roles of the design's stress list. Each adds one refusal to the one
// before it.
var (
	// Relay is the honest node: it forwards, answers and announces.
	Relay = Role{Name: "relay", Doc: "the honest node: forwards, answers and announces", Forward: true, Answer: true, Announce: true, Acknowledge: true}
	// Withholder announces what it holds and forwards, but never answers a
	// request.
	Withholder = Role{Name: "withholder", Doc: "announces and forwards, never answers a request", Forward: true, Announce: true, Acknowledge: true}
	// Silent also forwards nothing.
	Silent = Role{Name: "silent", Doc: "announces, never forwards or answers", Announce: true, Acknowledge: true}
	// Mute also sends no inventory or acknowledgement.
	Mute = Role{Name: "mute", Doc: "sends nothing: no forwarding, answers, inventory or acknowledgements"}
	// UnackingWithholder is a withholder that also never acknowledges: it
	// holds its pushers' window slots until they time out (tier 4).
	UnackingWithholder = Role{Name: "unacking-withholder", Doc: "a withholder that also never acknowledges what it receives", Forward: true, Announce: true}
	// UnderReporter tells each pusher it holds only what that pusher sent,
	// to draw pushes, and passes nothing on (the design's tailored
	// under-reporter: tier 4's furthest-behind rule in its plain form gives
	// it most pushes, which go no further).
	UnderReporter = Role{Name: "under-reporter", Doc: "tells each pusher it holds only what that pusher sent, and passes nothing on", Announce: true, Acknowledge: true, UnderReport: true}
	// PaddingUnderReporter is an under-reporter that also admits to each
	// pusher one part it holds that the pusher did not send: its reports
	// are never only what the pusher wrote, so a rule that looks for echoes
	// of its own pushes does not see it, and it still ranks near the
	// bottom.
	PaddingUnderReporter = Role{Name: "padding-under-reporter", Doc: "tells each pusher it holds what that pusher sent and one part more, and passes nothing on", Announce: true, Acknowledge: true, UnderReport: true, UnderReportPad: 1}
)

// Honest reports whether r is the honest relay: verdicts cover honest
// nodes only.
func (r Role) Honest() bool { return r == Relay }

var (
	mu    sync.RWMutex
	roles = []Role{Relay, Withholder, Silent, Mute, UnackingWithholder, UnderReporter, PaddingUnderReporter}
	// builtins is how many roles the list above holds: Unregister removes
	// only roles Register added after them.
	builtins = len(roles)
)

var validName = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// Register adds an adversarial role after the others. Its name must be new,
// lower-case letters, digits and dashes, and it must refuse something (a
// role with every capability is the relay); it pads its reports only if it
// under-reports, and by no negative count.
func Register(r Role) error {
	if !validName.MatchString(r.Name) {
		return fmt.Errorf("register role %q: want a lower-case name of letters, digits and dashes", r.Name)
	}
	if r.Forward && r.Answer && r.Announce && r.Acknowledge && !r.UnderReport {
		return fmt.Errorf("register role %q: it refuses nothing (that is the relay)", r.Name)
	}
	if r.UnderReportPad < 0 || (r.UnderReportPad > 0 && !r.UnderReport) {
		return fmt.Errorf("register role %q: UnderReportPad %d, want 0, or more only with UnderReport", r.Name, r.UnderReportPad)
	}
	mu.Lock()
	defer mu.Unlock()
	if slices.ContainsFunc(roles, func(have Role) bool { return have.Name == r.Name }) {
		return fmt.Errorf("register role %q: registered twice", r.Name)
	}
	roles = append(roles, r)
	return nil
}

// Unregister removes a role Register added (tests that add a role undo it);
// the package's own roles stay.
func Unregister(name string) {
	mu.Lock()
	defer mu.Unlock()
	added := slices.DeleteFunc(roles[builtins:], func(r Role) bool { return r.Name == name })
	roles = roles[:builtins+len(added)]
}

// All returns every role: the relay first, then the adversarial roles in
// registration order.
func All() []Role {
	mu.RLock()
	defer mu.RUnlock()
	return slices.Clone(roles)
}

// Adversarial returns every role but the relay, in order.
func Adversarial() []Role { return All()[1:] }

// Names returns every role's name, in order.
func Names() []string {
	all := All()
	out := make([]string, len(all))
	for i, r := range all {
		out[i] = r.Name
	}
	return out
}

// Lookup returns the role called name.
func Lookup(name string) (Role, bool) {
	for _, r := range All() {
		if r.Name == name {
			return r, true
		}
	}
	return Role{}, false
}
