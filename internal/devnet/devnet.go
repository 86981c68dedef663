// Package devnet is the one interface the suite talks to. A backend (the
// embedded simulated devnet, or a Kurtosis enclave) describes its nodes, its
// slot timing and where PTC votes come from; everything else the suite reads
// over HTTP through the metrics contract (package metrics) and the beacon API.
//
// Steps and assertions depend only on this package, never on a backend, so the
// same features run unchanged against either.
package devnet

import (
	"context"

	"github.com/segdiff/segdiff/diffusion/role"
	"github.com/segdiff/segdiff/internal/chainview"
	"github.com/segdiff/segdiff/metrics"
)

// Role is what a node does in the devnet. A node may hold several roles:
// its function (builder, proposer, node) and, when it plays one, an
// adversarial diffusion role named as package role names it ("withholder").
type Role string

// The functions a node holds.
const (
	RoleBuilder  Role = "builder"  // reveals execution payloads
	RoleProposer Role = "proposer" // publishes beacon blocks
	RoleNode     Role = "node"     // a beacon node that only relays and attests
)

// Adversarial reports whether r is one of package role's refusing roles:
// verdicts cover the other nodes.
func (r Role) Adversarial() bool {
	d, ok := role.Lookup(string(r))
	return ok && !d.Honest()
}

// Known reports whether r is a function or a diffusion role segdiff knows;
// a node holding an unknown role cannot be judged honest or not.
func (r Role) Known() bool {
	if r == RoleBuilder || r == RoleProposer || r == RoleNode {
		return true
	}
	_, ok := role.Lookup(string(r))
	return ok
}

// LinkClass names a node's access link. Reports group nodes by it.
type LinkClass string

// Link classes shared by both backends; "custom" carries its rates in the
// backend's own configuration.
const (
	LinkHome       LinkClass = "home"       // 50 Mbps up / 100 Mbps down
	LinkDatacenter LinkClass = "datacenter" // 1 Gbps symmetric
	LinkCustom     LinkClass = "custom"
)

// Node is one beacon node of the devnet as the suite sees it.
type Node struct {
	// ID is stable for the life of the devnet and unique within it; it is the
	// name reports and failure messages use.
	ID string `json:"id"`
	// Roles this node holds; never empty.
	Roles []Role `json:"roles"`
	// LinkClass of the node's access link.
	LinkClass LinkClass `json:"link_class"`
	// Region is the latency region the node is placed in ("" when unknown).
	Region string `json:"region,omitempty"`
	// MetricsURL is the node's Prometheus text exposition endpoint
	// (http://host:port/metrics). Every node has one.
	MetricsURL string `json:"metrics_url"`
	// BeaconURL is the node's beacon API base URL; "" when the backend does
	// not run a beacon API (the embedded devnet).
	BeaconURL string `json:"beacon_url,omitempty"`
	// Client names the implementation ("prysm", "embedded", ...).
	Client string `json:"client,omitempty"`
	// Validators are the validator indices the node's validator client
	// holds (empty when the backend does not say): on a network whose
	// proposers build their own payloads, the node holding a slot's
	// proposer built it.
	Validators ValidatorRange `json:"validators,omitzero"`
}

// ValidatorRange is the validator indices [First, First+Count).
type ValidatorRange struct {
	First uint64 `json:"first"`
	Count uint64 `json:"count"`
}

// Holds reports whether index is in r.
func (r ValidatorRange) Holds(index uint64) bool { return index >= r.First && index-r.First < r.Count }

// HasRole reports whether n holds role r.
func (n Node) HasRole(r Role) bool {
	for _, have := range n.Roles {
		if have == r {
			return true
		}
	}
	return false
}

// The chain's values a devnet reports, defined in package chainview (which
// the beacon API reader shares without importing this package).
type (
	// Timing is the devnet's slot clock.
	Timing = chainview.Timing
	// PTCVotes is the payload-timeliness committee's verdict on one slot's
	// payload.
	PTCVotes = chainview.PTCVotes
	// EpochHealth is what a beacon node's API says about one epoch.
	EpochHealth = chainview.EpochHealth
	// SlotHealth is one slot of an EpochHealth.
	SlotHealth = chainview.SlotHealth
)

// ErrNoVotes is returned by PTC when no payload attestation for the slot was
// found (no block at slot+1, or it carries none).
var ErrNoVotes = chainview.ErrNoVotes

// Devnet is a running devnet. Implementations are safe for concurrent use.
type Devnet interface {
	// Backend names the implementation ("embedded", "kurtosis").
	Backend() string
	// Nodes lists every node, sorted by ID.
	Nodes(ctx context.Context) ([]Node, error)
	// Timing returns the slot clock.
	Timing(ctx context.Context) (Timing, error)
	// PTC returns the payload_present votes for slot's payload.
	PTC(ctx context.Context, slot uint64) (PTCVotes, error)
	// PrometheusURL returns the base URL of a Prometheus that scrapes every
	// node, or "" when there is none and the suite must scrape directly.
	PrometheusURL() string
	// Close releases what the handle holds. For backends that started the
	// devnet it stops it; for attached ones (Kurtosis) it only detaches.
	Close() error
}

// Description is what a devnet runs, with the values its backend chose
// where Config left them to it (a default seed, a preset's node count).
type Description struct {
	Mode   Mode
	Seed   int64 // 0 when the backend has no seed (Kurtosis)
	Nodes  int
	Preset string // the preset or params file it was started from
	// Roles counts the nodes holding each role ("builder", "withholder",
	// ...); nil when unknown.
	Roles map[string]int
}

// Describer is implemented by devnets that can describe what they run;
// reports use it to label results with the seed and size.
type Describer interface {
	Describe() Description
}

// Finished is implemented by devnets that no longer produce slots (a
// finished simulation served for reading): every slot they report is
// final, so the suite need not wait for a later slot to settle one.
type Finished interface {
	Finished() bool
}

// Standard is implemented by devnets whose nodes the suite also measures
// through the standard source (package watch): their beacon API event
// streams, subscribed when the devnet was opened and held while it is
// open, and the clients' own per-topic byte counters.
type Standard interface {
	// StandardSnapshots returns every node's standard readings so far
	// (origin metrics.OriginStandardAPI), by node id, or why the devnet
	// cannot be watched (no slot clock, no event stream at all).
	StandardSnapshots(ctx context.Context, nodes []Node) (map[string]*metrics.Snapshot, error)
}
