// Package metricstest serves the segdiff metrics contract for a fake
// network: a builder and receivers whose histories are fixed in advance,
// each node's exposition on its own URL of one loopback HTTP server. The
// suite's step and backend tests, and tests of a client's exporter against
// the suite, read these nodes exactly as they read a real node's /metrics.
package metricstest

import (
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"

	"github.com/segdiff/segdiff/metrics"
)

// Network describes a fake network's history. Zero values take the
// defaults named per field.
type Network struct {
	// Mode is the diffusion mode payload_diffusion_info names (default
	// "segmented").
	Mode string
	// Genesis and SlotDuration place slot s at Genesis + s·SlotDuration
	// (defaults: 2027-01-15T08:00:00Z and 1 s).
	Genesis      time.Time
	SlotDuration time.Duration
	// Slots are revealed 1..Slots (default 6).
	Slots int
	// Receivers besides the builder b00, named n01.. (default 8). Receiver
	// i completes 200+40i ms after the reveal (times Slowdown), receives
	// BytesFactor·Compressed·(1.2+0.02i) data bytes and 2000 control bytes
	// per slot; every third is a datacenter node.
	Receivers int
	// Slowdown multiplies every receiver's delay (default 1).
	Slowdown float64
	// BytesFactor multiplies every receiver's data bytes (default 1).
	BytesFactor float64
	// Compressed is the payload's compressed size (default 746,000 bytes).
	Compressed int
	// RawSize gives slot's raw payload size (default 1 MiB for every slot).
	RawSize func(slot uint64) int
	// Incomplete reports whether receiver id never exports a completion
	// (a stranded node, or a client lacking the series); default none.
	Incomplete func(id string) bool
	// Client names the exporting client in payload_diffusion_info (default
	// "fake").
	Client string
}

// Defaults of Network.
var (
	DefaultGenesis = time.Unix(1_800_000_000, 0).UTC()
)

// Node is one fake node as a devnet lists it.
type Node struct {
	ID         string
	Builder    bool
	Datacenter bool
	MetricsURL string
	// Index is the node's place in the history: 0 for the builder, i for
	// receiver n0i (CompletionDelay, DataBytes).
	Index int
}

// Served is a running fake network.
type Served struct {
	Nodes []Node // sorted by ID: the builder b00 first
	srv   *httptest.Server
}

// Close stops the server.
func (s *Served) Close() { s.srv.Close() }

// withDefaults returns n with zero fields set to their defaults.
func (n Network) withDefaults() Network {
	if n.Mode == "" {
		n.Mode = "segmented"
	}
	if n.Genesis.IsZero() {
		n.Genesis = DefaultGenesis
	}
	if n.SlotDuration == 0 {
		n.SlotDuration = time.Second
	}
	if n.Slots == 0 {
		n.Slots = 6
	}
	if n.Receivers == 0 {
		n.Receivers = 8
	}
	if n.Slowdown == 0 {
		n.Slowdown = 1
	}
	if n.BytesFactor == 0 {
		n.BytesFactor = 1
	}
	if n.Compressed == 0 {
		n.Compressed = 746_000
	}
	if n.RawSize == nil {
		n.RawSize = func(uint64) int { return 1 << 20 }
	}
	if n.Incomplete == nil {
		n.Incomplete = func(string) bool { return false }
	}
	if n.Client == "" {
		n.Client = "fake"
	}
	return n
}

// SlotStart is when slot begins on n's clock.
func (n Network) SlotStart(slot uint64) time.Time {
	n = n.withDefaults()
	return n.Genesis.Add(time.Duration(slot) * n.SlotDuration)
}

// Reveal is when the builder reveals slot's payload: 500 ms into the slot.
func (n Network) Reveal(slot uint64) time.Time { return n.SlotStart(slot).Add(500 * time.Millisecond) }

// CompletionDelay is how long after the reveal receiver i (1-based)
// completes.
func (n Network) CompletionDelay(i int) time.Duration {
	n = n.withDefaults()
	return time.Duration(n.Slowdown * float64(200+40*i) * float64(time.Millisecond))
}

// nodes lists n's nodes, the builder b00 first.
func (n Network) nodes(base string) []Node {
	var out []Node
	for i := 0; i <= n.Receivers; i++ {
		node := Node{ID: fmt.Sprintf("n%02d", i), Datacenter: i > 0 && i%3 == 0, Index: i}
		if i == 0 {
			node = Node{ID: "b00", Builder: true, Datacenter: true}
		}
		node.MetricsURL = base + "/" + node.ID + "/metrics"
		out = append(out, node)
	}
	return out
}

// Serve starts n's nodes on one loopback server.
func (n Network) Serve() (*Served, error) {
	n = n.withDefaults()
	mux := http.NewServeMux()
	s := &Served{srv: httptest.NewServer(mux)}
	s.Nodes = n.nodes(s.srv.URL)
	for _, node := range s.Nodes {
		reg := prometheus.NewRegistry()
		rec, err := metrics.NewRecorder(reg, metrics.WithInfo(n.Mode, "segdiff/1", n.Client))
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("fake node %s: %w", node.ID, err)
		}
		n.record(rec, node.Index, node.ID, uint64(n.Slots))
		mux.Handle("/"+node.ID+"/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	}
	return s, nil
}

// Live is a fake network served as running nodes serve it: a scrape holds
// the history of the slots that ended by then.
type Live struct {
	// Genesis gives the genesis, read at every scrape (a fake devnet whose
	// clock starts when the suite attaches fixes it on the first read).
	Genesis func() time.Time
	// Contract says which nodes export the metrics contract; the others
	// export none of it (an unpatched client).
	Contract func(id string) bool
	// Extra, when not nil, writes a node's own series (a client's
	// counters) after the contract's, as they stand at now.
	Extra func(w io.Writer, node Node, now time.Time)
}

// ServeLive starts n's nodes as l describes, on one loopback server; n's
// Genesis is replaced by l.Genesis().
func (n Network) ServeLive(l Live) (*Served, error) {
	n = n.withDefaults()
	mux := http.NewServeMux()
	s := &Served{srv: httptest.NewServer(mux)}
	s.Nodes = n.nodes(s.srv.URL)
	for _, node := range s.Nodes {
		mux.HandleFunc("/"+node.ID+"/metrics", func(w http.ResponseWriter, _ *http.Request) {
			now, net := time.Now(), n
			net.Genesis = l.Genesis()
			w.Header().Set("Content-Type", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
			if l.Contract(node.ID) {
				reg := prometheus.NewRegistry()
				rec, err := metrics.NewRecorder(reg, metrics.WithInfo(n.Mode, "segdiff/1", n.Client))
				if err != nil {
					http.Error(w, err.Error(), http.StatusInternalServerError)
					return
				}
				var ended uint64 // slot s ends when s+1 starts
				if k := now.Sub(net.Genesis) / net.SlotDuration; k >= 2 {
					ended = min(uint64(k)-1, uint64(net.Slots))
				}
				net.record(rec, node.Index, node.ID, ended)
				families, err := reg.Gather()
				if err != nil {
					http.Error(w, err.Error(), http.StatusInternalServerError)
					return
				}
				enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
				for _, f := range families {
					_ = enc.Encode(f)
				}
			}
			if l.Extra != nil {
				l.Extra(w, node, now)
			}
		})
	}
	return s, nil
}

// Copies is how many copies of a slot's payload receiver i receives, in
// message data: BytesFactor·(1.2+0.02i).
func (n Network) Copies(i int) float64 {
	n = n.withDefaults()
	return n.BytesFactor * (1.2 + 0.02*float64(i))
}

// DataBytes is what receiver i receives for a slot's payload, in data
// bytes: Copies(i)·Compressed.
func (n Network) DataBytes(i int) int {
	n = n.withDefaults()
	return int(n.Copies(i) * float64(n.Compressed))
}

// record writes node i's history of slots 1..last into rec.
func (n Network) record(rec *metrics.Recorder, i int, id string, last uint64) {
	for slot := uint64(1); slot <= last; slot++ {
		start, reveal := n.SlotStart(slot), n.Reveal(slot)
		rec.BlockArrived(slot, start.Add(100*time.Millisecond))
		rec.BlockInstalled(slot, start.Add(time.Duration(110+i)*time.Millisecond))
		if i == 0 {
			rec.Revealed(slot, reveal, n.RawSize(slot), n.Compressed, 23)
			continue
		}
		delay := n.CompletionDelay(i)
		rec.FirstArrival(slot, reveal.Add(delay/4))
		if !n.Incomplete(id) {
			rec.Completed(slot, reveal.Add(delay))
		}
		rec.AddReceivedBytes(slot, metrics.KindData, n.DataBytes(i))
		rec.AddReceivedBytes(slot, metrics.KindControl, 2000)
	}
}

// Slots renders per-slot series values as an exposition and reads it back
// with package metrics: the typed slots a scrape of a node exporting
// exactly these values gives. Keys are contract names, with the
// distinguishing label in braces where a name has two series
// (`payload_diffusion_received_bytes{kind="data"}`); times are Unix seconds.
// A value metrics refuses panics: the caller's test data is wrong.
func Slots(series map[string]map[uint64]float64) map[uint64]*metrics.Slot {
	var b strings.Builder
	typed := map[string]bool{}
	// Sorted, so that each family's samples are contiguous, as in an
	// exposition.
	for _, s := range slices.Sorted(maps.Keys(series)) {
		name, labels, _ := strings.Cut(s, "{")
		labels = strings.TrimSuffix(labels, "}")
		if labels != "" {
			labels = "," + labels
		}
		if !typed[name] {
			typed[name] = true
			fmt.Fprintf(&b, "# TYPE %s gauge\n", name)
		}
		for _, slot := range slices.Sorted(maps.Keys(series[s])) {
			fmt.Fprintf(&b, "%s{slot=\"%d\"%s} %v\n", name, slot, labels, series[s][slot])
		}
	}
	snap, err := metrics.Parse(strings.NewReader(b.String()), "metricstest.Slots")
	if err != nil {
		panic(fmt.Sprintf("metricstest: %v\n%s", err, b.String()))
	}
	return snap.Slots
}
