package sweep

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/segdiff/segdiff/assertions"
	"github.com/segdiff/segdiff/internal/devnet"
	"github.com/segdiff/segdiff/internal/devnet/embedded"
	"github.com/segdiff/segdiff/metrics/metricstest"
)

// The tests run cells through this test binary acting as `segdiff sim`
// (fakeEnv set): it answers at once with results computed from its flags,
// so the scheduling, resume, interrupt and summary paths are tested without
// simulating a network. cmd/segdiff's tests run the real sim.
const (
	fakeEnv      = "SWEEP_FAKE_SIM"
	fakeSleepEnv = "SWEEP_FAKE_SLEEP" // how long a cell takes
	fakeFailEnv  = "SWEEP_FAKE_FAIL"  // a seed whose cell fails
	fakeDirEnv   = "SWEEP_FAKE_DIR"   // where cells note that they run
)

func TestMain(m *testing.M) {
	if os.Getenv(fakeEnv) != "" {
		os.Exit(fakeSim(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// fakeSim is the test binary as `segdiff sim`: completion times and copies
// follow from the configuration (a slower custom uplink is slower, a
// datacenter share faster, whole mode twice as slow; the seed moves them
// a little), so summaries are deterministic.
func fakeSim(args []string) int {
	if len(args) == 0 || args[0] != "sim" {
		return 2
	}
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	jsonPath := fs.String("json", "", "")
	specPath := fs.String("spec", "", "")
	fs.String("max-memory", "", "")
	if err := fs.Parse(args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	cfg, err := embedded.ReadSpec(*specPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if dir := os.Getenv(fakeDirEnv); dir != "" {
		mark := filepath.Join(dir, fmt.Sprintf("running-%d", os.Getpid()))
		os.WriteFile(mark, nil, 0o644)
		defer os.Remove(mark)
		entries, _ := os.ReadDir(dir)
		n := 0
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), "running-") {
				n++
			}
		}
		f, _ := os.OpenFile(filepath.Join(dir, "concurrency.log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		fmt.Fprintln(f, n)
		f.Close()
		f, _ = os.OpenFile(filepath.Join(dir, "gomemlimit.log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		fmt.Fprintln(f, os.Getenv("GOMEMLIMIT"), os.Getenv("GOGC"))
		f.Close()
	}
	if d, err := time.ParseDuration(os.Getenv(fakeSleepEnv)); err == nil {
		time.Sleep(d)
	}
	if s := os.Getenv(fakeFailEnv); s == strconv.FormatInt(cfg.Seed, 10) {
		fmt.Fprintln(os.Stderr, "fake sim: failing as asked")
		return 1
	}
	warm, cold, err := fakeSummaries(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	run := map[string]any{"summary": warm, "cold_summary": cold, "wall_seconds": 0.1, "result": map[string]any{"config": cfg}}
	b, _ := json.Marshal([]any{run})
	if err := os.WriteFile(*jsonPath, b, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// fakeSummaries summarise a record whose figures follow from cfg: a
// builder (node 0) revealing every payload, and receivers completing
// factor·(0.8 + jitter + 0.4·i/n) s after it with copies + jitter copies.
func fakeSummaries(cfg embedded.Config) (warm, cold embedded.Summary, err error) {
	factor := 1.0
	if cfg.NodeClass == devnet.LinkCustom && cfg.CustomUpMbps > 0 {
		factor = 50 / float64(cfg.CustomUpMbps)
	}
	factor *= 1 - 0.3*cfg.DatacenterShare
	copies := 6.0
	if cfg.Mode == devnet.ModeWhole {
		factor, copies = factor*2, 4
	}
	jitter := float64(cfg.Seed%5) * 0.03
	const compressed = 1000
	builder := map[string]map[uint64]float64{string(assertions.SeriesReveal): {}, string(assertions.SeriesPayloadSize): {}}
	net := assertions.Network{}
	receivers := make([]map[string]map[uint64]float64, cfg.Nodes)
	for i := range receivers {
		receivers[i] = map[string]map[uint64]float64{}
		for _, s := range []assertions.Series{assertions.SeriesCompleted, assertions.SeriesDataBytes, assertions.SeriesControlBytes,
			assertions.SeriesNetDataBytes, assertions.SeriesNetControlBytes} {
			receivers[i][string(s)] = map[uint64]float64{}
		}
	}
	var warmSlots, coldSlots []uint64
	for p := range cfg.Payloads {
		slot := uint64(p + 1)
		reveal := 1000 + 12*float64(slot)
		builder[string(assertions.SeriesReveal)][slot] = reveal
		builder[string(assertions.SeriesPayloadSize)][slot] = compressed
		for i := 1; i < cfg.Nodes; i++ {
			r := receivers[i]
			r[string(assertions.SeriesCompleted)][slot] = reveal + factor*(0.8+jitter+0.4*float64(i)/float64(cfg.Nodes))
			r[string(assertions.SeriesDataBytes)][slot] = math.Round((copies + jitter) * compressed)
			r[string(assertions.SeriesControlBytes)][slot] = 0
			r[string(assertions.SeriesNetDataBytes)][slot] = math.Round((copies + jitter) * compressed)
			r[string(assertions.SeriesNetControlBytes)][slot] = 0
		}
		if p == 0 {
			coldSlots = append(coldSlots, slot)
		} else {
			warmSlots = append(warmSlots, slot)
		}
	}
	net.Nodes = append(net.Nodes, assertions.Node{ID: embedded.NodeID(0), Builder: true, Slots: metricstest.Slots(builder)})
	for i := 1; i < cfg.Nodes; i++ {
		net.Nodes = append(net.Nodes, assertions.Node{ID: embedded.NodeID(i), Link: "home", Slots: metricstest.Slots(receivers[i])})
	}
	label := embedded.Summary{Mode: string(cfg.Mode), Seed: cfg.Seed, Nodes: cfg.Nodes}
	warm, cold = label, label
	if warm.Summary, err = assertions.Summarize(net, warmSlots, cfg.Window); err != nil {
		return warm, cold, err
	}
	cold.Summary, err = assertions.Summarize(net, coldSlots, cfg.Window)
	warm.Checks, cold.Checks = embedded.CheckValues(net, warmSlots), embedded.CheckValues(net, coldSlots)
	return warm, cold, err
}

// fakeRunner runs cells through the fake sim into a new directory.
func fakeRunner(t *testing.T, env ...string) *Runner {
	t.Helper()
	return &Runner{Binary: os.Args[0], Env: append([]string{fakeEnv + "=1"}, env...), Jobs: 1, Out: t.TempDir(), Progress: testWriter{t}}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

// mustPlan decodes and plans a grid.
func mustPlan(t *testing.T, grid string) *Plan {
	t.Helper()
	g, err := Decode("test.yaml", []byte(grid))
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	p, err := NewPlan(g, Memory{})
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	return p
}
