package kurtosistest

import (
	"fmt"
	"io"
	"math"
	"testing"
	"time"

	"github.com/golang/snappy"

	"github.com/segdiff/segdiff/internal/beacon/beacontest"
	"github.com/segdiff/segdiff/internal/devnet"
	"github.com/segdiff/segdiff/internal/devnet/kurtosis"
	"github.com/segdiff/segdiff/metrics"
	"github.com/segdiff/segdiff/metrics/metricstest"
)

// Client is a kind of client a live fake enclave runs, by what it lets the
// suite measure.
type Client struct {
	// Name is devnet.Node.Client, what errors about the node name.
	Name string
	// Contract: the node exports the payload_diffusion_* contract.
	Contract bool
	// Events: the node's event stream emits the watched topics; without,
	// the stream connects and stays silent (a client that never emits
	// them).
	Events bool
	// TopicBytes: the node exports metrics.TopicBytesSeries.
	TopicBytes bool
}

// The client kinds of the offline proof: a client carrying segdiff's
// patches (the contract, and upstream Prysm's events and counter beside
// it); an unpatched client with the event stream only; an unpatched
// client with the event stream and a per-topic byte counter (upstream
// Prysm).
var (
	ContractClient      = Client{Name: "prysm-segdiff", Contract: true, Events: true, TopicBytes: true}
	StandardClient      = Client{Name: "lighthouse", Events: true}
	StandardBytesClient = Client{Name: "prysm", Events: true, TopicBytes: true}
)

// Live enclave timing: the clock starts LiveLead after the suite first
// reads genesis; slots last LiveSlot (the history's last completion, 1.02 s
// into a slot, stays inside it).
const (
	LiveLead = 300 * time.Millisecond
	LiveSlot = 1500 * time.Millisecond
	// LiveDropNode's event stream drops once, LiveDropAt after genesis:
	// slot 2, after the node's last event of that slot and before its
	// first of slot 3, so nothing is lost but slots 1 and 2 are gaps.
	LiveDropNode = "n02"
	LiveDropAt   = 2*LiveSlot + 850*time.Millisecond
)

// startLive serves cfg's network as running clients of cfg.Client's kind
// (cfg.Clients for some nodes): the history's slots happen in real time
// from a genesis fixed when the suite first asks for it. Receiver i
// reports the payload gossip-valid 3/4 of its completion delay after the
// reveal and available at its completion (the contract's completion time,
// which the contract series carry too); the builder reports both at the
// reveal; every node reports the block gossip-valid 100 ms and imported
// 110+i ms into the slot (the contract's arrival and install). Receiver i's
// per-topic counter grows by (1.2+0.02i)·BytesFactor copies of the slot's
// envelope at its completion. Every slot has a signed envelope of 1 MiB.
func startLive(t testing.TB, cfg EnclaveConfig) *Enclave {
	t.Helper()
	net := cfg.Network
	if net.Mode == "" {
		net.Mode = string(devnet.ModeSegmented)
	}
	if net.SlotDuration == 0 {
		net.SlotDuration = LiveSlot
	}
	if net.Slots == 0 {
		net.Slots = 6
	}
	if net.Incomplete == nil {
		net.Incomplete = func(string) bool { return false }
	}
	clock := &beacontest.Clock{Lead: LiveLead}
	chain := cfg.Chain
	if chain == nil {
		chain = beacontest.HealthyChain(metricstest.DefaultGenesis, HealthyEpochs, HealthySlotsPerEpoch)
	}
	chain.Clock = clock
	chain.Spec["SLOT_DURATION_MS"] = fmt.Sprint(net.SlotDuration.Milliseconds())
	compressed := map[uint64]int{}
	for slot := uint64(1); slot <= uint64(net.Slots)+1; slot++ {
		env := beacontest.Envelope(slot, 1<<20)
		chain.PutEnvelope(slot, env)
		raw, err := env.MarshalSSZ()
		if err != nil {
			t.Fatal(err)
		}
		compressed[slot] = len(snappy.Encode(nil, raw))
	}
	kind := func(id string) Client {
		if c, ok := cfg.Clients[id]; ok {
			return c
		}
		return *cfg.Client
	}
	served, err := net.ServeLive(metricstest.Live{
		Genesis:  clock.Genesis,
		Contract: func(id string) bool { return kind(id).Contract },
		Extra: func(w io.Writer, n metricstest.Node, now time.Time) {
			if !kind(n.ID).TopicBytes {
				return
			}
			var total float64
			for slot := uint64(1); slot <= uint64(net.Slots) && !n.Builder; slot++ {
				if now.Sub(clock.Genesis()) >= revealAt(net, slot)+net.CompletionDelay(n.Index) {
					total += math.Round(net.Copies(n.Index) * float64(compressed[slot]))
				}
			}
			fmt.Fprintf(w, "# TYPE %s counter\n%s{is_partial=\"false\",topic=\"/eth2/00000000/execution_payload/ssz_snappy\"} %.0f\n",
				metrics.TopicBytesSeries, metrics.TopicBytesSeries, total)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(served.Close)
	blocks := bidBlocks(chain, net)
	e := &kurtosis.Endpoints{Version: kurtosis.EndpointsVersion, Enclave: "fake-live", Mode: devnet.Mode(net.Mode),
		SecondsPerSlot: int(net.SlotDuration / time.Second), SlotDurationMS: int(net.SlotDuration.Milliseconds()), PayloadDueBPS: 5000,
		WrittenAt: time.Now().UTC(), PrometheusURL: "http://127.0.0.1:9"}
	streams := map[string]*beacontest.Stream{}
	for _, n := range served.Nodes {
		k := kind(n.ID)
		node := devnet.Node{ID: n.ID, Roles: []devnet.Role{devnet.RoleNode}, LinkClass: devnet.LinkHome, MetricsURL: n.MetricsURL, Client: k.Name}
		if n.Builder {
			node.Roles = []devnet.Role{devnet.RoleBuilder, devnet.RoleProposer}
		}
		if n.Datacenter {
			node.LinkClass = devnet.LinkDatacenter
		}
		stream := &beacontest.Stream{Clock: clock}
		if k.Events {
			stream.Events = liveEvents(net, n, cfg.AvailableLag)
			if n.ID == LiveDropNode {
				stream.DropAt = LiveDropAt
			}
		}
		streams[n.ID] = stream
		node.BeaconURL = beacontest.NewNodeServer(t, chain, stream).URL
		e.Nodes = append(e.Nodes, kurtosis.EndpointNode{Node: node, CLService: "cl-" + n.ID, ELRPCURL: serveEL(t, blocks, cfg.LackingEL == n.ID)})
	}
	enc := writeEnclave(t, e)
	enc.Streams = streams
	return enc
}

// revealAt is when the history's builder reveals slot, after genesis.
func revealAt(net metricstest.Network, slot uint64) time.Duration {
	return net.Reveal(slot).Sub(net.SlotStart(0))
}

// liveEvents is node n's event stream for net's history (see startLive),
// a receiver's availability lag after its completion.
func liveEvents(net metricstest.Network, n metricstest.Node, lag time.Duration) []beacontest.Event {
	var out []beacontest.Event
	for slot := uint64(1); slot <= uint64(net.Slots); slot++ {
		start := net.SlotStart(slot).Sub(net.SlotStart(0))
		reveal := revealAt(net, slot)
		gossip, available := reveal, reveal
		if !n.Builder {
			d := net.CompletionDelay(n.Index)
			gossip, available = reveal+d*3/4, reveal+d+lag
		}
		out = append(out,
			beacontest.Event{Topic: metrics.TopicBlockGossip, Slot: slot, At: start + 100*time.Millisecond},
			beacontest.Event{Topic: metrics.TopicBlock, Slot: slot, At: start + time.Duration(110+n.Index)*time.Millisecond},
			beacontest.Event{Topic: metrics.TopicPayloadGossip, Slot: slot, At: gossip})
		if !net.Incomplete(n.ID) {
			out = append(out, beacontest.Event{Topic: metrics.TopicPayloadAvailable, Slot: slot, At: available})
		}
	}
	return out
}
