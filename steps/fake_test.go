package steps_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/segdiff/segdiff/devnet"
	"github.com/segdiff/segdiff/metrics"
	"github.com/segdiff/segdiff/mode"
)

// fakeBackend is registered for these tests only. Preset "fake-missing":
// node n03 never exports payload_diffusion_completed_timestamp_seconds;
// "fake-noptc": no PTC votes for slot 5; "fake-small": the builder's
// payloads are 4 KiB, an unloaded chain's; any other preset ("fake", the
// features' "ci"): every node exports every series.
const fakeBackend = "fake-steps-test"

func init() { devnet.Register(fakeBackend, openFake) }

// fakeDevnet serves one exposition per node from metrics.Recorders fed
// with a deterministic history: a builder b00 revealing slots 1..6 and
// eight receivers whose completion grows with their index; whole mode is
// five times slower and costs three times the bytes.
type fakeDevnet struct {
	noPTC  uint64 // slot without votes, 0 for none
	srv    *httptest.Server
	nodes  []devnet.Node
	timing devnet.Timing
}

const (
	fakeSlots      = 6
	fakeReceivers  = 8
	fakeCompressed = 746_000
)

func openFake(_ context.Context, cfg devnet.Config) (devnet.Devnet, error) {
	if cfg.Preset == "" {
		return nil, fmt.Errorf("fake backend: no preset")
	}
	slowdown, bytesFactor := 1.0, 1.0
	if cfg.Mode == devnet.ModeWhole {
		slowdown, bytesFactor = 5, 3
	}
	f := &fakeDevnet{timing: devnet.Timing{Genesis: time.Unix(1_800_000_000, 0), SlotDuration: time.Second, PayloadDueBPS: 5000}}
	if cfg.Preset == "fake-noptc" {
		f.noPTC = 5
	}
	// A stress configuration acts as far as a fake can: payload-size sets
	// the reported raw size, and omit leaves every receiver stranded unless
	// the mode's parity spares the omitted parts.
	_, stress, err := devnet.ParseStress(cfg.Stress)
	if err != nil {
		return nil, err
	}
	info, _ := mode.Lookup(mode.Mode(cfg.Mode))
	stranded := stress["omit"] > 0 && !info.Coded
	mux := http.NewServeMux()
	f.srv = httptest.NewServer(mux)
	for i := 0; i <= fakeReceivers; i++ {
		n := devnet.Node{ID: fmt.Sprintf("n%02d", i), Roles: []devnet.Role{devnet.RoleNode}, LinkClass: devnet.LinkHome, Client: "fake"}
		if i == 0 {
			n.ID, n.Roles, n.LinkClass = "b00", []devnet.Role{devnet.RoleBuilder, devnet.RoleProposer}, devnet.LinkDatacenter
		} else if i%3 == 0 {
			n.LinkClass = devnet.LinkDatacenter
		}
		n.MetricsURL = f.srv.URL + "/" + n.ID + "/metrics"
		reg := prometheus.NewRegistry()
		rec, err := metrics.NewRecorder(reg, metrics.WithInfo(string(cfg.Mode), "segdiff/1", "fake"))
		if err != nil {
			return nil, err
		}
		for slot := uint64(1); slot <= fakeSlots; slot++ {
			start := f.timing.SlotStart(slot)
			reveal := start.Add(500 * time.Millisecond)
			rec.BlockArrived(slot, start.Add(100*time.Millisecond))
			rec.BlockInstalled(slot, start.Add(time.Duration(110+i)*time.Millisecond))
			if i == 0 {
				raw := 1 << 20
				if v, ok := stress["payload-size"]; ok {
					raw = int(v)
				}
				if cfg.Preset == "fake-small" {
					raw = 4096 + int(slot)
				}
				rec.Revealed(slot, reveal, raw, fakeCompressed, 23)
				continue
			}
			delay := time.Duration(slowdown * float64(200+40*i) * float64(time.Millisecond))
			rec.FirstArrival(slot, reveal.Add(delay/4))
			if !(cfg.Preset == "fake-missing" && n.ID == "n03") && !stranded {
				rec.Completed(slot, reveal.Add(delay))
			}
			rec.AddReceivedBytes(slot, metrics.KindData, int(bytesFactor*fakeCompressed*(1.2+0.02*float64(i))))
			rec.AddReceivedBytes(slot, metrics.KindControl, 2000)
		}
		mux.Handle("/"+n.ID+"/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		f.nodes = append(f.nodes, n)
	}
	sort.Slice(f.nodes, func(i, j int) bool { return f.nodes[i].ID < f.nodes[j].ID })
	return f, nil
}

func (f *fakeDevnet) Backend() string                               { return fakeBackend }
func (f *fakeDevnet) Nodes(context.Context) ([]devnet.Node, error)  { return f.nodes, nil }
func (f *fakeDevnet) Timing(context.Context) (devnet.Timing, error) { return f.timing, nil }
func (f *fakeDevnet) PrometheusURL() string                         { return "" }
func (f *fakeDevnet) Close() error                                  { f.srv.Close(); return nil }
func (f *fakeDevnet) PTC(_ context.Context, slot uint64) (devnet.PTCVotes, error) {
	if slot > fakeSlots || slot == f.noPTC {
		return devnet.PTCVotes{}, devnet.ErrNoVotes
	}
	return devnet.PTCVotes{Slot: slot, Size: 512, PayloadPresent: 400 + int(slot), Source: "fake"}, nil
}
