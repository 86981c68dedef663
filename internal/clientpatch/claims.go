package clientpatch

import (
	"fmt"
	"slices"
	"strings"
)

// Observed is what a scrape of one running node showed: the node, its CL
// type, and which sources its exposition carries.
type Observed struct {
	Node, Type string
	// Contract: the exposition has payload_diffusion_info.
	Contract bool
	// TopicBytes: it has the per-topic byte counter (metrics.TopicBytesSeries)
	// with at least one series.
	TopicBytes bool
}

// Claim is one source of one node: what the manifest says and what the
// node's exposition shows.
type Claim struct {
	Node, Entry, Source string
	Claimed, Found      bool
}

// Holds reports whether the manifest and the node agree.
func (c Claim) Holds() bool { return c.Claimed == c.Found }

// CheckClaims compares the sources the manifest's entries claim with what
// the nodes of a devnet started from paramsFile expose. A node's entry is the
// CL entry that lists paramsFile and has the node's type; a node without one
// (or with several) is an error naming it. The standard API is not checked
// here (a scrape cannot show an event stream; the suite's preflight reads
// it). Claims holding or not are all returned, in node and source order.
func (m *Manifest) CheckClaims(paramsFile string, nodes []Observed) ([]Claim, error) {
	var out []Claim
	var errs []string
	for _, n := range nodes {
		var entries []*Client
		for i := range m.Clients {
			c := &m.Clients[i]
			if c.Layer == LayerCL && c.Type == n.Type && slices.Contains(c.Params, paramsFile) {
				entries = append(entries, c)
			}
		}
		switch len(entries) {
		case 0:
			errs = append(errs, fmt.Sprintf("node %s (%s): no cl entry of %s lists %s", n.Node, n.Type, m.Path, paramsFile))
			continue
		case 1:
		default:
			names := make([]string, len(entries))
			for i, e := range entries {
				names[i] = e.Name
			}
			errs = append(errs, fmt.Sprintf("node %s (%s): entries %s all list %s; the claim to check is ambiguous", n.Node, n.Type, strings.Join(names, ", "), paramsFile))
			continue
		}
		e := entries[0]
		out = append(out,
			Claim{Node: n.Node, Entry: e.Name, Source: SourceContract, Claimed: e.Offers(SourceContract), Found: n.Contract},
			Claim{Node: n.Node, Entry: e.Name, Source: SourceTopicBytes, Claimed: e.Offers(SourceTopicBytes), Found: n.TopicBytes})
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("check claims: %s", strings.Join(errs, "; "))
	}
	return out, nil
}
