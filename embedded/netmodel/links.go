package embedded

import (
	"fmt"

	"github.com/libp2p/go-libp2p/x/simlibp2p"
	"github.com/marcopolo/simnet"

	"github.com/segdiff/segdiff/devnet"
)

// Link rates of the shared classes, in Mbps.
const (
	homeUpMbps       = 50
	homeDownMbps     = 100
	datacenterMbps   = 1000
	defaultCustomMbp = 50
)

// linkRates returns the uplink and downlink rates of a class. Only
// BitsPerSecond is set: simnet's default MTU (1500 B) is the token bucket's
// burst, and each direction queues per flow with FQ-CoDel.
func (c Config) linkRates(class devnet.LinkClass) (simnet.NodeBiDiLinkSettings, error) {
	mk := func(up, down int) simnet.NodeBiDiLinkSettings {
		return simnet.NodeBiDiLinkSettings{
			Uplink:   simnet.LinkSettings{BitsPerSecond: up * simlibp2p.OneMbps},
			Downlink: simnet.LinkSettings{BitsPerSecond: down * simlibp2p.OneMbps},
		}
	}
	switch class {
	case devnet.LinkHome, "":
		return mk(homeUpMbps, homeDownMbps), nil
	case devnet.LinkDatacenter:
		return mk(datacenterMbps, datacenterMbps), nil
	case devnet.LinkCustom:
		up, down := c.CustomUpMbps, c.CustomDownMbps
		if up <= 0 {
			up = defaultCustomMbp
		}
		if down <= 0 {
			down = 2 * up
		}
		return mk(up, down), nil
	}
	return simnet.NodeBiDiLinkSettings{}, fmt.Errorf("unknown link class %q (want home, datacenter or custom)", class)
}

// linkClasses assigns each node its class: node 0 (the builder) gets
// BuilderClass, nodes 1..⌊share·(n−1)⌋ datacenter, the rest NodeClass.
func (c Config) linkClasses() []devnet.LinkClass {
	classes := make([]devnet.LinkClass, c.Nodes)
	dc := int(c.DatacenterShare * float64(c.Nodes-1))
	for i := range classes {
		switch {
		case i == 0:
			classes[i] = c.BuilderClass
		case i <= dc:
			classes[i] = devnet.LinkDatacenter
		default:
			classes[i] = c.NodeClass
		}
		if classes[i] == "" {
			classes[i] = devnet.LinkHome
		}
	}
	return classes
}

// linkGroups turns per-node classes into simlibp2p's run-length groups, which
// create hosts in index order.
func (c Config) linkGroups(classes []devnet.LinkClass) ([]simlibp2p.NodeLinkSettingsAndCount, error) {
	var groups []simlibp2p.NodeLinkSettingsAndCount
	for i, class := range classes {
		if i > 0 && class == classes[i-1] {
			groups[len(groups)-1].Count++
			continue
		}
		s, err := c.linkRates(class)
		if err != nil {
			return nil, fmt.Errorf("node %d: %w", i, err)
		}
		groups = append(groups, simlibp2p.NodeLinkSettingsAndCount{LinkSettings: s, Count: 1})
	}
	return groups, nil
}
