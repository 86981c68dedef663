package diffusion

import (
	"context"
	"fmt"
	"sync"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/segdiff/segdiff/diffusion/mode"
	"github.com/segdiff/segdiff/eip8411"
)

// Payload is one slot's execution payload as its builder reveals it.
type Payload struct {
	Slot      uint64
	BlockRoot [32]byte
	// Group is the body, cut and committed to as the bid's descriptor
	// says (Policy.Cut).
	Group *Group
}

// Prepared is a payload cut into the messages a policy publishes. It is
// made once per payload (Policy.Prepare) and only read afterwards. A nil
// message is one the builder omits (a fault the stress list names): it is
// never sent, announced or answered.
type Prepared struct {
	Payload  Payload
	Messages [][]byte
}

// Env is the node a policy runs on, as the policy sees it. Implementations
// must be safe for concurrent use.
type Env interface {
	// Host is the node's libp2p host.
	Host() host.Host
	// Installed returns a channel that is closed once slot's block is
	// installed (validated and applied), after which Commitment(slot)
	// returns what it commits to.
	Installed(slot uint64) <-chan struct{}
	Commitment(slot uint64) (Commitment, bool)
	// Role says how the node behaves towards payload messages.
	Role() Role
	// PeerRole says how a peer behaves. A client cannot know and returns
	// Relay; a simulation uses it to apply a peer's refusal where stock
	// gossipsub emits on the peer's behalf what the peer would not send
	// (IHAVE and IDONTWANT come from the router, not the application), by
	// ignoring it on arrival.
	PeerRole(p peer.ID) Role
	// Drop reports whether a fault drops this arrival of kind, before the
	// node handles it (packet loss); always false on a real network.
	Drop(kind Loss) bool
	// Events receives what the policy observes.
	Events() Events
}

// PartSharer is implemented by an Env whose process holds many nodes (a
// simulation): every node that verifies part index of slot's payload holds
// the same bytes, so one copy can serve them all. The phase-forwarding
// modes keep, to serve peers, the slice SharePart returns for each newly
// verified part. A client holds the part it received and does not
// implement it.
type PartSharer interface {
	// SharePart returns data, or a slice of equal content already held;
	// callers never write to either.
	SharePart(slot uint64, index int, data []byte) []byte
}

// Events receives a policy's observations for the node's metrics.
// Implementations must be safe for concurrent use and must not block.
type Events interface {
	// Received notes an accepted payload message of slot; duplicate when
	// the node already held its content.
	Received(slot uint64, duplicate bool)
	// Completed notes that the node holds slot's verified payload (the
	// first call per slot counts).
	Completed(slot uint64)
	// Rejected notes a payload message rejected for reason (an eip8411
	// reason or ReasonInstallTimeout).
	Rejected(reason string)
	// Deferred notes a payload message parked until its block is installed.
	Deferred()
	// ReceivedBytes notes bytes of slot's payload received outside
	// gossipsub's own messages (a policy's own protocol): data, or control
	// (inventories, requests, acknowledgements) when control is true.
	ReceivedBytes(slot uint64, control bool, n int)
}

// Attribution maps gossip traffic to the payload slot it carries, for byte
// accounting: every Publish entry on the policy's topic, and every
// IHAVE/IWANT/IDONTWANT id naming one of its messages.
type Attribution interface {
	// DataSlot returns the slot of a payload message's data.
	DataSlot(data []byte) (uint64, bool)
	// IDSlot returns the slot of the payload message a gossip id names.
	IDSlot(id string) (uint64, bool)
	// PartialSlot returns the slot of a partial-message group id.
	PartialSlot(groupID []byte) (uint64, bool)
}

// Policy is one diffusion mode, created per network by New. It is safe for
// concurrent use by every node of the network.
type Policy interface {
	Attribution
	// Mode names the policy.
	Mode() mode.Mode
	// Topic is the gossip topic its payload messages travel on.
	Topic() string
	// Cut cuts and commits a payload body the way this policy sends it; the
	// bid commits to the group's descriptor.
	Cut(body *eip8411.Body) (*Group, error)
	// Prepare cuts a payload into the messages its builder publishes.
	Prepare(p Payload) (*Prepared, error)
	// NewNode returns the policy's state on one node. It is called before
	// the node's router is built: the node adds Node.RouterOptions.
	NewNode(env Env) Node
}

// Node is a policy on one node.
type Node interface {
	// RouterOptions are the pubsub options the policy needs on the node's
	// router (inspectors, tracers, extensions); nil when none.
	RouterOptions() []pubsub.Option
	// Join joins the policy's topic on the node's running router,
	// registers its validator and starts consuming its subscription until
	// ctx ends.
	Join(ctx context.Context, ps *pubsub.PubSub) error
	// Publish reveals a prepared payload from this node (the builder).
	Publish(ctx context.Context, p *Prepared) error
}

// Options configure a policy; zero values take the defaults named per
// field.
type Options struct {
	// SegmentSize is the data size of a segment in bytes (32 KiB).
	SegmentSize int
	// Order is how segment policies cut a payload (zero: segdiff/1's
	// compress-then-cut; eip8411.OrderCutThenCompress is the study's). Whole
	// payloads are always compressed whole.
	Order eip8411.Order
	// Parity is the parity shards of a coded policy (0: as many as data
	// shards).
	Parity int
	// InstallTimeout bounds how long a payload message waits for its block
	// to be installed before it is ignored (4 s).
	InstallTimeout time.Duration
	// ForkDigest is the topics' fork digest, hex ("00000000").
	ForkDigest string
	// PushWidth is how many mesh peers get each new part eagerly in the
	// phase-forwarding modes (DefaultPushWidth).
	PushWidth int
	// Pulls are the disciplined-pull rules of tier2, tier3 and tier4
	// (DefaultPullRules for zero fields).
	Pulls PullRules
	// State are tier 4's rules (DefaultStateRules for zero fields);
	// whole-paced reads its window, acknowledgement timeout and pace tick
	// from them.
	State StateRules
}

func (o Options) withDefaults() Options {
	if o.SegmentSize == 0 {
		o.SegmentSize = 32 << 10
	}
	if o.InstallTimeout == 0 {
		o.InstallTimeout = 4 * time.Second
	}
	if o.ForkDigest == "" {
		o.ForkDigest = "00000000"
	}
	return o
}

// Constructor makes a policy for one network.
type Constructor func(Options) (Policy, error)

var (
	registryMu sync.RWMutex
	registry   = map[mode.Mode]Constructor{}
)

// Register makes a policy available to New under m. Policies register from
// init; a mode that package mode does not list, or registered twice,
// panics, as it is a programming error.
func Register(m mode.Mode, c Constructor) {
	if _, ok := mode.Lookup(m); !ok {
		panic("diffusion: policy for unlisted mode " + string(m))
	}
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[m]; dup {
		panic("diffusion: policy registered twice: " + string(m))
	}
	registry[m] = c
}

// Modes returns the modes with a registered policy, in package mode's
// order.
func Modes() []mode.Mode {
	registryMu.RLock()
	defer registryMu.RUnlock()
	var out []mode.Mode
	for _, i := range mode.All() {
		if _, ok := registry[i.Mode]; ok {
			out = append(out, i.Mode)
		}
	}
	return out
}

// New returns a fresh policy for mode m.
func New(m mode.Mode, o Options) (Policy, error) {
	registryMu.RLock()
	c, ok := registry[m]
	registryMu.RUnlock()
	if !ok {
		names := make([]string, 0)
		for _, have := range Modes() {
			names = append(names, string(have))
		}
		return nil, fmt.Errorf("no diffusion policy for mode %q (have %v)", m, names)
	}
	o = o.withDefaults()
	switch {
	case o.SegmentSize < 64 || o.SegmentSize > eip8411.MaxSegmentSize:
		return nil, &OptionError{"SegmentSize", fmt.Errorf("%d, want 64..%d bytes", o.SegmentSize, eip8411.MaxSegmentSize)}
	case o.InstallTimeout < 0:
		return nil, &OptionError{"InstallTimeout", fmt.Errorf("%v, want > 0", o.InstallTimeout)}
	case o.PushWidth < 0:
		return nil, &OptionError{"PushWidth", fmt.Errorf("%d, want >= 0", o.PushWidth)}
	case o.Parity < 0 || o.Parity > eip8411.MaxCodedShards/2:
		return nil, &OptionError{"Parity", fmt.Errorf("%d, want 0..%d", o.Parity, eip8411.MaxCodedShards/2)}
	case o.Pulls.Window < 0:
		return nil, &OptionError{"Pulls.Window", fmt.Errorf("%v, want >= 0", o.Pulls.Window)}
	case o.Pulls.Ban < 0:
		return nil, &OptionError{"Pulls.Ban", fmt.Errorf("%v, want >= 0", o.Pulls.Ban)}
	case o.Pulls.Offers < 0 || o.Pulls.Items < 0:
		return nil, &OptionError{"Pulls", fmt.Errorf("%+v, want no negative field", o.Pulls)}
	}
	if err := o.State.check(); err != nil {
		return nil, err
	}
	return c(o)
}

// OptionError is an Options field New refused, by its Go name ("PushWidth",
// "Pulls.Window").
type OptionError struct {
	Option string
	Err    error
}

func (e *OptionError) Error() string { return "diffusion option " + e.Option + ": " + e.Err.Error() }
func (e *OptionError) Unwrap() error { return e.Err }
