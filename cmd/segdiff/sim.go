package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/segdiff/segdiff/devnet"
	"github.com/segdiff/segdiff/embedded"
)

func init() {
	register("sim", command{summary: "run the embedded (simulated) devnet and print completion, bytes and PTC figures", run: runSim})
}

// simFlags are the sim subcommand's flags; zero or empty values keep the
// preset's.
type simFlags struct {
	preset              string
	modes, seeds        string
	cfg                 embedded.Config
	jsonPath, endpoints string
	serve               string
	cpuProfile          string
	procs               int
}

func parseSimFlags(args []string, stderr io.Writer) (*simFlags, error) {
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := &simFlags{}
	d := embedded.DefaultConfig()
	fs.StringVar(&f.preset, "preset", embedded.PresetCI, "named configuration: ci or study-500; other flags override it")
	fs.StringVar(&f.modes, "mode", "", "diffusion mode(s), comma separated: whole, segmented, segmented-batch (default "+string(d.Mode)+")")
	fs.StringVar(&f.seeds, "seed", "", "seed(s), comma separated; a seed fixes topology, link classes and placement (default "+strconv.FormatInt(d.Seed, 10)+")")
	c := &f.cfg
	fs.IntVar(&c.Nodes, "nodes", 0, "nodes including the builder (preset default)")
	fs.IntVar(&c.Degree, "degree", 0, "connections per node (random regular graph)")
	fs.IntVar(&c.MeshD, "mesh-d", 0, "gossipsub D (Dlo, Dhi follow: 8 → 6/12)")
	fs.IntVar(&c.GossipLazy, "dlazy", -1, "gossipsub Dlazy: the least number of non-mesh peers sent IHAVE each heartbeat (default 6)")
	fs.Float64Var(&c.GossipFactor, "gossip-factor", -1, "gossipsub gossip factor: the share of non-mesh peers sent IHAVE each heartbeat (default 0.25); --dlazy 0 --gossip-factor 0 turns IHAVE/IWANT off")
	fs.IntVar(&c.Payloads, "payloads", 0, "payloads, one slot apart; the first (cold) is left out of the summary")
	fs.IntVar(&c.PayloadSize, "payload-size", 0, "raw payload body size in bytes (default 1 MiB)")
	fs.IntVar(&c.SegmentSize, "segment-size", 0, "segment size in bytes (default 32 KiB)")
	fs.Float64Var(&c.DatacenterShare, "datacenter-share", 0, "share of non-builder nodes on 1 Gbps datacenter links (0..1)")
	nodeClass := fs.String("node-class", "", "link class of ordinary nodes: home (50/100 Mbps), datacenter (1 Gbps), custom")
	builderClass := fs.String("builder-class", "", "link class of the builder: home, datacenter, custom")
	fs.IntVar(&c.CustomUpMbps, "custom-up", 0, "uplink of the custom class, Mbps (default 50)")
	fs.IntVar(&c.CustomDownMbps, "custom-down", 0, "downlink of the custom class, Mbps (default 2× up)")
	fs.StringVar(&c.Latency, "latency", "", "latency model: geo (five regions, mean ≈56 ms one way) or uniform")
	fs.DurationVar(&c.UniformLatency, "uniform-latency", 0, "one-way latency of the uniform model (default 25ms)")
	fs.DurationVar(&c.SlotDuration, "slot", 0, "slot duration (default 12s)")
	fs.DurationVar(&c.InstallDelay, "install-delay", 0, "block install delay after arrival (default 200ms)")
	fs.DurationVar(&c.InstallTimeout, "install-timeout", 0, "how long a payload message waits for its block (default 4s)")
	fs.DurationVar(&c.RevealOffset, "reveal-offset", 0, "builder reveal time into the slot (default 3s)")
	fs.Uint64Var(&c.PayloadDueBPS, "payload-due-bps", 0, "payload deadline, basis points of the slot (default 5000)")
	fs.IntVar(&c.PTCSize, "ptc-size", 0, "payload-timeliness committee size (default 512)")
	fs.IntVar(&c.ValidatorsPerNode, "validators-per-node", 0, "validators on each non-builder node (default 32)")
	fs.DurationVar(&c.Window, "window", 0, "completion budget the summary counts against (default 3s)")
	fs.StringVar(&f.jsonPath, "json", "", "write the full results (per node, per slot) as JSON to this file")
	fs.StringVar(&f.serve, "serve", "", "after the run keep serving every node's metrics at http://ADDR/nodes/<id>/metrics until interrupted (one run only)")
	fs.StringVar(&f.endpoints, "endpoints", "", "write the endpoints descriptor (nodes, metrics URLs, timing, PTC votes) as JSON to this file")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile to this file")
	fs.IntVar(&f.procs, "procs", 1, "OS threads running Go code (GOMAXPROCS) for the simulation; 0 keeps the runtime's choice. One is fastest: the bubble's goroutines wake each other packet by packet, and a second thread spends its time in wake-ups (see embedded/README.md)")
	fs.StringVar(&f.cfg.HeapProfile, "memprofile", "", "write a heap profile to this file at the last payload's deadline")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	c.NodeClass = devnet.LinkClass(*nodeClass)
	c.BuilderClass = devnet.LinkClass(*builderClass)
	return f, nil
}

// configs expands the flags into one Config per (mode, seed).
func (f *simFlags) configs() ([]embedded.Config, error) {
	base, err := embedded.Preset(f.preset)
	if err != nil {
		return nil, err
	}
	o := f.cfg
	setInt := func(dst *int, v int) {
		if v != 0 {
			*dst = v
		}
	}
	setDur := func(dst *time.Duration, v time.Duration) {
		if v != 0 {
			*dst = v
		}
	}
	setInt(&base.Nodes, o.Nodes)
	setInt(&base.Degree, o.Degree)
	setInt(&base.MeshD, o.MeshD)
	if o.GossipLazy < -1 || o.GossipFactor < 0 && o.GossipFactor != -1 {
		return nil, fmt.Errorf("--dlazy %d / --gossip-factor %v: want >= 0 (leave unset for the preset's 6 / 0.25)", o.GossipLazy, o.GossipFactor)
	}
	if o.GossipLazy >= 0 {
		base.GossipLazy = o.GossipLazy
	}
	if o.GossipFactor >= 0 {
		base.GossipFactor = o.GossipFactor
	}
	setInt(&base.Payloads, o.Payloads)
	setInt(&base.PayloadSize, o.PayloadSize)
	setInt(&base.SegmentSize, o.SegmentSize)
	setInt(&base.CustomUpMbps, o.CustomUpMbps)
	setInt(&base.CustomDownMbps, o.CustomDownMbps)
	setInt(&base.PTCSize, o.PTCSize)
	setInt(&base.ValidatorsPerNode, o.ValidatorsPerNode)
	setDur(&base.UniformLatency, o.UniformLatency)
	setDur(&base.SlotDuration, o.SlotDuration)
	setDur(&base.InstallDelay, o.InstallDelay)
	setDur(&base.InstallTimeout, o.InstallTimeout)
	setDur(&base.RevealOffset, o.RevealOffset)
	setDur(&base.Window, o.Window)
	if o.DatacenterShare != 0 {
		base.DatacenterShare = o.DatacenterShare
	}
	if o.NodeClass != "" {
		base.NodeClass = o.NodeClass
	}
	if o.BuilderClass != "" {
		base.BuilderClass = o.BuilderClass
	}
	if o.Latency != "" {
		base.Latency = o.Latency
	}
	base.HeapProfile = o.HeapProfile
	if o.PayloadDueBPS != 0 {
		base.PayloadDueBPS = o.PayloadDueBPS
	}
	modes := []devnet.Mode{base.Mode}
	if f.modes != "" {
		modes = nil
		for _, s := range strings.Split(f.modes, ",") {
			m, err := devnet.ParseMode(strings.TrimSpace(s))
			if err != nil {
				return nil, fmt.Errorf("flag -mode: %w", err)
			}
			modes = append(modes, m)
		}
	}
	seeds := []int64{base.Seed}
	if f.seeds != "" {
		seeds = nil
		for _, s := range strings.Split(f.seeds, ",") {
			v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("flag -seed: %q is not an integer", s)
			}
			seeds = append(seeds, v)
		}
	}
	var out []embedded.Config
	for _, m := range modes {
		for _, s := range seeds {
			c := base
			c.Mode, c.Seed = m, s
			if err := c.Validate(); err != nil {
				return nil, err
			}
			out = append(out, c)
		}
	}
	if (f.serve != "" || f.endpoints != "") && len(out) != 1 {
		return nil, fmt.Errorf("flags -serve and -endpoints need exactly one run, got %d (modes × seeds)", len(out))
	}
	return out, nil
}

// simRun is one entry of the -json output.
type simRun struct {
	Summary   embedded.Summary   `json:"summary"`
	WallSecs  float64            `json:"wall_seconds"`
	Result    *embedded.Result   `json:"result"`
	Endpoints embedded.Endpoints `json:"endpoints"`
}

// runSim runs the simulations inside testing.Main: synctest.Test needs a
// *testing.T, and testing.Main is the documented entry "for other systems
// that simulate go test". testing.Main prints PASS/FAIL to stdout and calls
// os.Exit, so the framework's stdout is pointed at stderr and everything this
// command reports is written before the test function returns.
func runSim(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f, err := parseSimFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "segdiff sim: %v\n", err)
		return 2
	}
	cfgs, err := f.configs()
	if err != nil {
		fmt.Fprintf(stderr, "segdiff sim: %v\n", err)
		return 2
	}
	if f.procs < 0 {
		fmt.Fprintf(stderr, "segdiff sim: --procs %d: want 0 or more\n", f.procs)
		return 2
	}
	if f.procs > 0 {
		runtime.GOMAXPROCS(f.procs)
	}
	code := 0
	body := func(t *testing.T) {
		if err := simulateAll(ctx, t, f, cfgs, stdout, stderr); err != nil {
			fmt.Fprintf(stderr, "segdiff sim: %v\n", err)
			code = 1
			t.Fail()
		}
	}
	os.Args = []string{os.Args[0], "-test.run=^sim$", "-test.timeout=0"}
	realStdout := os.Stdout
	os.Stdout = os.Stderr
	defer func() { os.Stdout = realStdout }()
	match := func(pat, str string) (bool, error) { return regexp.MatchString(pat, str) }
	testing.Main(match, []testing.InternalTest{{Name: "sim", F: body}}, nil, nil)
	return code // not reached: testing.Main exits (1 when the body failed)
}

func simulateAll(ctx context.Context, t *testing.T, f *simFlags, cfgs []embedded.Config, stdout, stderr io.Writer) error {
	if f.cpuProfile != "" {
		pf, err := os.Create(f.cpuProfile)
		if err != nil {
			return fmt.Errorf("create cpu profile: %w", err)
		}
		if err := pprof.StartCPUProfile(pf); err != nil {
			return fmt.Errorf("start cpu profile: %w", err)
		}
		defer func() { pprof.StopCPUProfile(); pf.Close() }()
	}
	var runs []simRun
	var sums []embedded.Summary
	for _, c := range cfgs {
		start := time.Now()
		res, err := embedded.Simulate(t, c, stderr)
		// A mesh that does not form is a known intermittent failure of the
		// simulated network (embedded.ErrMeshNotFormed): try a fresh one.
		for attempt := 2; errors.Is(err, embedded.ErrMeshNotFormed) && attempt <= 3; attempt++ {
			fmt.Fprintf(stderr, "segdiff sim: %v; retrying with a fresh network (attempt %d of 3)\n", err, attempt)
			res, err = embedded.Simulate(t, c, stderr)
		}
		if err != nil {
			return fmt.Errorf("mode %s seed %d: %w", c.Mode, c.Seed, err)
		}
		wall := time.Since(start)
		s := embedded.Summarize(res)
		fmt.Fprintf(stderr, "run done: mode %s seed %d nodes %d payloads %d in %.1fs wall: setup %.1fs (%v virtual), %.1fs per payload slot (median), peak RSS so far %s\n",
			c.Mode, c.Seed, c.Nodes, c.Payloads, wall.Seconds(), res.SetupWall.Seconds(), res.Setup.Round(time.Millisecond), res.MedianSlotWall().Seconds(), peakRSS())
		sums = append(sums, s)
		runs = append(runs, simRun{Summary: s, WallSecs: wall.Seconds(), Result: res, Endpoints: embedded.EndpointsOf(res, "")})
	}
	if err := embedded.WriteSummaryTable(stdout, sums, cfgs[0].Window); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	if f.jsonPath != "" {
		b, err := json.MarshalIndent(runs, "", "  ")
		if err != nil {
			return fmt.Errorf("encode results: %w", err)
		}
		if err := os.WriteFile(f.jsonPath, b, 0o644); err != nil {
			return fmt.Errorf("write results: %w", err)
		}
	}
	if f.serve == "" && f.endpoints == "" {
		return nil
	}
	res := runs[0].Result
	// The network is gone; hand its memory back before serving for what may
	// be a long time, so a suite can open the next devnet beside this one
	// (a 500-node run peaks near 12 GiB and keeps well under 1 GiB).
	debug.FreeOSMemory()
	base := ""
	var srv *embedded.Server
	if f.serve != "" {
		var err error
		if srv, err = embedded.Serve(f.serve, res); err != nil {
			return err
		}
		defer srv.Close()
		base = srv.URL()
		fmt.Fprintf(stderr, "serving %d nodes' metrics at %s/nodes/<id>/metrics\n", len(res.Nodes), base)
	}
	if f.endpoints != "" {
		if err := embedded.WriteEndpoints(f.endpoints, embedded.EndpointsOf(res, base)); err != nil {
			return err
		}
	}
	if srv != nil {
		<-ctx.Done() // until interrupted (the backend's Close sends SIGTERM)
	}
	return nil
}

// peakRSS is the process's peak resident set so far (getrusage maxrss).
func peakRSS() string {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return "unknown"
	}
	return fmt.Sprintf("%.2f GiB", float64(ru.Maxrss)/(1<<20)) // Maxrss is in KiB on Linux
}
