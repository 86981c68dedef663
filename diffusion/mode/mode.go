// Package mode is the one list of payload diffusion modes. Every other list
// derives from it or is checked against it by a test: devnet.Mode and
// ParseMode, the metrics contract's mode label, the network-params checker,
// the client manifest, the step sentences, the Kurtosis package's
// constants.star and the embedded devnet's registered diffusion policies.
//
// To add a mode: add a row here, register its policy in package diffusion,
// and (if clients can run it) add it to kurtosis/src/package_io/constants.star;
// the agreement test names whatever is missing.
package mode

import (
	"fmt"
	"regexp"
	"strings"
)

// Mode names how the builder's payload is diffused. It is the value of the
// metrics contract's mode label, of devnet.Config.Mode, of
// `segdiff sim --mode` and of network-params segdiff.mode.
type Mode string

// The diffusion modes.
const (
	Whole          Mode = "whole"
	Segmented      Mode = "segmented"
	SegmentedBatch Mode = "segmented-batch"
	Phase          Mode = "phase"
	Tier2          Mode = "tier2"
	WholePulls     Mode = "whole-pulls"
	Tier3          Mode = "tier3"
	WholePaced     Mode = "whole-paced"
	Tier4          Mode = "tier4"
)

// Info describes one mode.
type Info struct {
	Mode Mode
	// Summary says what the mode adds, in a line.
	Summary string
	// Clients is true when patched clients can run the mode, so that a
	// Kurtosis network-params file may select it.
	Clients bool
	// OneMessage is true when the payload travels as one gossip message
	// (whole payloads), which sizes buffers by the payload, not a segment.
	OneMessage bool
	// Coded is true when the parts carry an erasure code (data and parity
	// shards).
	Coded bool
	// Acks is true when a sender waits for the receiver's acknowledgement
	// (a window of copies in flight): a node that never acknowledges
	// means something only here.
	Acks bool
	// PeerState is true when a node keeps what each peer reported holding
	// and aims its pushes by it: an under-reporter means something only
	// here.
	PeerState bool
}

// Default is the mode a devnet runs when none is named.
const Default = Segmented

// table is the list: the whole-message modes, then the ladder of segment
// modes, each adding one mechanism to the one before it.
var table = []Info{
	{Mode: Whole, Summary: "one gossip message carrying the whole compressed payload", Clients: true, OneMessage: true},
	{Mode: WholePulls, Summary: "whole-message gossip with tier 2's disciplined pulls (an RPC inspector on stock gossipsub's IHAVE/IWANT)", OneMessage: true},
	{Mode: WholePaced, Summary: "whole-message gossip with paced announcements and at most three copies in flight per node, released by the receiver's acknowledgement (the whole payload as one part of the partial-messages extension: the stock router cannot hold a mesh push back)", OneMessage: true, Acks: true},
	{Mode: Segmented, Summary: "EIP-8411 segments as independent gossip messages, published one after another", Clients: true},
	{Mode: SegmentedBatch, Summary: "segments published as one batch: one copy of every segment before a second copy of any", Clients: true},
	{Mode: Phase, Summary: "+ announce and phase forwarding: each new segment pushed to two mesh peers, announced to the rest at once"},
	{Mode: Tier2, Summary: "+ disciplined pulls: one request per segment, an offer table of announcers, move-on after a window, brief bans"},
	{Mode: Tier3, Summary: "+ a systematic erasure code: k data and m parity shards, any k rebuild, code consistency checked after rebuilding", Coded: true},
	{Mode: Tier4, Summary: "+ state: a HAVE bitmap per peer and the rules that read it (cancel at dispatch, rarest first, the decode claim, a push budget, projection), striped publishing, a window of parts in flight, paced gossip, pushes to the peers furthest behind", Coded: true, Acks: true, PeerState: true},
}

// All returns every mode, in ladder order.
func All() []Info { return append([]Info(nil), table...) }

// Names returns every mode's name, in ladder order.
func Names() []string {
	out := make([]string, len(table))
	for i, m := range table {
		out[i] = string(m.Mode)
	}
	return out
}

// ClientNames returns the names of the modes patched clients can run.
func ClientNames() []string {
	var out []string
	for _, m := range table {
		if m.Clients {
			out = append(out, string(m.Mode))
		}
	}
	return out
}

// Lookup returns the mode's Info.
func Lookup(m Mode) (Info, bool) {
	for _, i := range table {
		if i.Mode == m {
			return i, true
		}
	}
	return Info{}, false
}

// Parse checks s names a mode.
func Parse(s string) (Mode, error) {
	if _, ok := Lookup(Mode(s)); ok {
		return Mode(s), nil
	}
	return "", fmt.Errorf("unknown diffusion mode %q (want one of %s)", s, strings.Join(Names(), ", "))
}

// Pattern is a regular-expression alternation matching exactly the mode
// names, for step sentences: "whole|segmented|segmented-batch".
func Pattern() string {
	quoted := make([]string, len(table))
	for i, m := range table {
		quoted[i] = regexp.QuoteMeta(string(m.Mode))
	}
	return strings.Join(quoted, "|")
}
