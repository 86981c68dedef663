package netmodel

import (
	"fmt"
	"slices"

	"github.com/libp2p/go-libp2p/x/simlibp2p"
	"github.com/marcopolo/simnet"

	"github.com/segdiff/segdiff/internal/devnet"
)

// Network models: how hosts talk over the links and latency.
const (
	// Packets is the reference: QUIC over simnet's packet-level links
	// (go-libp2p's x/simlibp2p).
	Packets = "packets"
	// Flows is package flownet's in-memory streams through fair-shared
	// links: faster, validated against Packets.
	Flows = "flows"
	// FlowsCC is Flows with a congestion window per connection and CoDel's
	// marks on the links (flownet's window.go): for the stock segment
	// modes, whose full uplinks the window changes.
	FlowsCC = "flows-cc"
	// FlowsCCSimnet is FlowsCC with simnet's CoDel rule: a flow judged
	// whatever its backlog, its state dropped when the round finds it empty
	// (flownet.Options.CoDelAnyBacklog). Nearer the reference on most
	// stock-mode figures; validated for none.
	FlowsCCSimnet = "flows-cc-simnet"
	// FlowsCCSimnetFQ is FlowsCCSimnet with simnet's FQ-CoDel buckets: each
	// link hashes its connections into FlowBuckets queues, which colliding
	// connections share (flownet.Options.FlowBuckets). Validated for
	// segmented, tier3 and tier4 on the honest network (embedded.ModelCaveat).
	FlowsCCSimnetFQ = "flows-cc-simnet-fq"
	// FlowsCCSimnetDrops is FlowsCCSimnetFQ with CoDel's drops in place of
	// its marks: the loss, its retransmission and the head-of-line wait of
	// the stream behind it (flownet.Options.Drops). Validated for none.
	FlowsCCSimnetDrops = "flows-cc-simnet-drops"
	// FlowsCCSimnetFQPacked is FlowsCCSimnetFQ with quic-go's writes: a
	// write returns once its data is in flight, not once it has left the
	// uplink (flownet.Options.PackedWrites), so an application's urgent
	// control message waits behind the connection's queued data as over
	// QUIC. Validated for segmented-batch and tiers 2-4 on the honest
	// network (embedded.ModelCaveat).
	FlowsCCSimnetFQPacked = "flows-cc-simnet-fq-packed"
)

// FlowBuckets is how many FQ-CoDel buckets each link of the -fq, -drops
// and -fq-packed models hashes its connections into: simnet's default, which the
// packet model runs.
const FlowBuckets = simnet.DefaultFlowBucketCount

// Models are the network models, the reference first.
var Models = []string{Packets, Flows, FlowsCC, FlowsCCSimnet, FlowsCCSimnetFQ, FlowsCCSimnetDrops, FlowsCCSimnetFQPacked}

// Flowing reports whether model is one of package flownet's.
func Flowing(model string) bool { return model != Packets && slices.Contains(Models, model) }

// Link rates of the shared classes, in Mbps.
const (
	homeUpMbps       = 50
	homeDownMbps     = 100
	datacenterMbps   = 1000
	defaultCustomMbp = 50
)

// Rates is a link's uplink and downlink, in Mbps.
type Rates struct{ UpMbps, DownMbps int }

// CustomRates are the rates of the "custom" class; zero values take 50 Mbps
// up and twice the uplink down.
type CustomRates Rates

// ClassRates returns the rates of a link class.
func ClassRates(class devnet.LinkClass, custom CustomRates) (Rates, error) {
	switch class {
	case devnet.LinkHome, "":
		return Rates{homeUpMbps, homeDownMbps}, nil
	case devnet.LinkDatacenter:
		return Rates{datacenterMbps, datacenterMbps}, nil
	case devnet.LinkCustom:
		up, down := custom.UpMbps, custom.DownMbps
		if up <= 0 {
			up = defaultCustomMbp
		}
		if down <= 0 {
			down = 2 * up
		}
		return Rates{up, down}, nil
	}
	return Rates{}, fmt.Errorf("unknown link class %q (want home, datacenter or custom)", class)
}

// Settings are simnet's settings for r. Only BitsPerSecond is set: simnet's
// default MTU (1500 B) is the token bucket's burst, and each direction
// queues per flow with FQ-CoDel, as the prototype ran under synctest.
func (r Rates) Settings() simnet.NodeBiDiLinkSettings {
	return simnet.NodeBiDiLinkSettings{
		Uplink:   simnet.LinkSettings{BitsPerSecond: r.UpMbps * simlibp2p.OneMbps},
		Downlink: simnet.LinkSettings{BitsPerSecond: r.DownMbps * simlibp2p.OneMbps},
	}
}

// Classes assigns n nodes their link class: the builder gets builderClass;
// the first ⌊share·(n−1)⌋ other nodes by index get datacenter links, as
// the prototype assigns them; the rest nodeClass.
func Classes(n, builder int, builderClass, nodeClass devnet.LinkClass, datacenterShare float64) []devnet.LinkClass {
	classes := make([]devnet.LinkClass, n)
	dc := int(datacenterShare * float64(n-1))
	others := 0
	for i := range classes {
		switch {
		case i == builder:
			classes[i] = builderClass
		case others < dc:
			classes[i] = devnet.LinkDatacenter
			others++
		default:
			classes[i] = nodeClass
			others++
		}
		if classes[i] == "" {
			classes[i] = devnet.LinkHome
		}
	}
	return classes
}

// Groups turns per-node rates into simlibp2p's run-length groups, which
// create hosts in index order.
func Groups(rates []Rates) []simlibp2p.NodeLinkSettingsAndCount {
	var groups []simlibp2p.NodeLinkSettingsAndCount
	for i, r := range rates {
		if i > 0 && r == rates[i-1] {
			groups[len(groups)-1].Count++
			continue
		}
		groups = append(groups, simlibp2p.NodeLinkSettingsAndCount{LinkSettings: r.Settings(), Count: 1})
	}
	return groups
}
