package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/segdiff/segdiff/diffusion/mode"
	"github.com/segdiff/segdiff/internal/atomicfile"
	"github.com/segdiff/segdiff/internal/devnet/embedded"
)

func init() {
	register("sim", command{summary: "run the embedded (simulated) devnet and print completion, bytes and PTC figures", run: runSim})
}

// simFlags are the sim subcommand's flags. The configuration flags are a
// view of the run spec (embedded.Keys): each sets one key, over the preset
// or the --spec file, only when given (0 is not "default"), and
// Config.Validate is the one check.
type simFlags struct {
	preset, spec        string
	modes, seeds        string
	set                 [][2]string // key, value, in command-line order
	jsonPath, endpoints string
	serve               string
	cpuProfile          string
	memProfile          string
	procs               int
	maxMemory           string
}

const simSynopsis = `usage: segdiff sim [flags]
Runs the embedded devnet: a summary table on stdout, progress on stderr.
The run spec is the --preset (or the --spec file) with every configuration
flag given applied over it.

flags:
`

// parseSimFlags parses the sim's flags; with --help it prints the usage to
// help and returns flag.ErrHelp. Errors are one line naming the flag.
func parseSimFlags(args []string, help io.Writer) (*simFlags, error) {
	fs := newFlagSet("sim")
	f := &simFlags{}
	ci, study := embedded.DefaultConfig(), mustPreset(embedded.PresetStudy500)
	fs.StringVar(&f.preset, "preset", embedded.PresetCI, "named configuration: "+strings.Join(embedded.Presets, ", ")+"; other flags override it")
	fs.StringVar(&f.spec, "spec", "", "a run spec (JSON, as the suite's backend and sweep cells write it) instead of --preset; other flags override it")
	// Func, not String: an empty --mode or --seed is an error, not the default.
	listFlag := func(name, usage string, dst *string) {
		fs.Func(name, usage, func(s string) error {
			if strings.TrimSpace(s) == "" {
				return errors.New("empty (leave the flag out for the default)")
			}
			*dst = s
			return nil
		})
	}
	listFlag("mode", "diffusion mode(s), comma separated: "+strings.Join(mode.Names(), ", ")+" (default "+string(ci.Mode)+")", &f.modes)
	listFlag("seed", "seed(s), comma separated; a seed fixes topology, link classes and placement (default "+strconv.FormatInt(ci.Seed, 10)+")", &f.seeds)
	for _, k := range embedded.Keys() {
		if k.Name == "mode" || k.Name == "seed" {
			continue
		}
		def := ci.Get(k.Name)
		if s := study.Get(k.Name); s != def {
			def += " (study-500: " + s + ")"
		}
		if def == "" || def == " (study-500: )" {
			def = "unset"
		}
		fs.Func(k.Name, k.Doc+" (default "+def+")", func(v string) error {
			if v == "" {
				return errors.New("empty (leave the flag out for the default)")
			}
			var probe embedded.Config
			if err := probe.Set(k.Name, v); err != nil {
				return err
			}
			f.set = append(f.set, [2]string{k.Name, v})
			return nil
		})
	}
	fs.StringVar(&f.jsonPath, "json", "", "write the full results (per node, per slot) as JSON to this file")
	fs.StringVar(&f.serve, "serve", "", "after the run keep serving every node's metrics at http://ADDR/nodes/<id>/metrics until interrupted (one run only)")
	fs.StringVar(&f.endpoints, "endpoints", "", "write the endpoints descriptor (nodes, metrics URLs, timing, PTC votes) as JSON to this file")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile to this file")
	fs.StringVar(&f.memProfile, "memprofile", "", "write a heap profile to this file at the last payload's deadline")
	fs.IntVar(&f.procs, "procs", 1, "OS threads running Go code (GOMAXPROCS) for the simulation; 0 keeps the runtime's choice. One is fastest: the bubble's goroutines wake each other packet by packet, and a second thread spends its time in wake-ups (see internal/devnet/embedded/README.md)")
	fs.StringVar(&f.maxMemory, "max-memory", "", "refuse runs whose estimated peak memory exceeds this (e.g. 12GiB; default: the machine's available memory; 0 disables the check)")
	pos, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		printHelp(help, simSynopsis, fs)
	}
	if err != nil {
		return nil, err
	}
	if len(pos) > 0 {
		return nil, fmt.Errorf("unexpected argument %q (the sim takes flags only)", pos[0])
	}
	if f.procs < 0 {
		return nil, fmt.Errorf("--procs %d: want 0 or more", f.procs)
	}
	return f, nil
}

func mustPreset(name string) embedded.Config {
	c, err := embedded.Preset(name)
	if err != nil {
		panic(err)
	}
	return c
}

// configs expands the flags into one Config per (mode, seed), each
// validated once.
func (f *simFlags) configs() ([]embedded.Config, error) {
	base, err := embedded.Preset(f.preset)
	if err != nil {
		return nil, fmt.Errorf("--preset: %w", err)
	}
	if f.spec != "" {
		if f.preset != embedded.PresetCI {
			return nil, errors.New("--spec and --preset both given: the spec is a whole configuration")
		}
		if base, err = embedded.ReadSpec(f.spec); err != nil {
			return nil, fmt.Errorf("--spec: %w", err)
		}
	}
	for _, kv := range f.set {
		if err := base.Set(kv[0], kv[1]); err != nil {
			return nil, fmt.Errorf("--%s: %w", kv[0], err)
		}
	}
	base.HeapProfile = f.memProfile
	modes := []string{string(base.Mode)}
	if f.modes != "" {
		modes = strings.Split(f.modes, ",")
	}
	seeds := []string{strconv.FormatInt(base.Seed, 10)}
	if f.seeds != "" {
		seeds = strings.Split(f.seeds, ",")
	}
	var out []embedded.Config
	for _, m := range modes {
		for _, seed := range seeds {
			c := base
			if err := c.Set("mode", strings.TrimSpace(m)); err != nil {
				return nil, fmt.Errorf("--mode %q: %w", m, err)
			}
			if err := c.Set("seed", strings.TrimSpace(seed)); err != nil {
				return nil, fmt.Errorf("--seed %q: %w", seed, err)
			}
			// The one check of each run, in this process: the spec file
			// (the suite's backend, a sweep cell) was read unvalidated.
			if err := c.Validate(); err != nil {
				if f.spec != "" {
					return nil, fmt.Errorf("--spec %s with the flags given: %w", f.spec, flagErrors(err))
				}
				return nil, flagErrors(err)
			}
			out = append(out, c)
		}
	}
	if (f.serve != "" || f.endpoints != "") && len(out) != 1 {
		return nil, fmt.Errorf("--serve and --endpoints need exactly one run, got %d (modes × seeds)", len(out))
	}
	return out, nil
}

// flagErrors renders a config validation error by the flags that set the
// invalid keys: "--dlazy (gossip_lazy): -3, want >= 0".
func flagErrors(err error) error {
	var ve *embedded.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	flags := map[string]string{}
	for _, k := range embedded.Keys() {
		if k.JSON != "" {
			flags[k.JSON] = k.Name
		}
	}
	msgs := make([]string, len(ve.Fields))
	for i, f := range ve.Fields {
		name := f.Key
		if fl, ok := flags[f.Key]; ok {
			name = "--" + fl + " (" + f.Key + ")"
		}
		msgs[i] = name + ": " + f.Err.Error()
	}
	return fmt.Errorf("%s: %w", strings.Join(msgs, "; "), errInvalidConfig)
}

var errInvalidConfig = errors.New("invalid configuration, nothing was started")

// memoryLimit reads a memory limit flag (--max-memory, the sweep's
// --memory-budget) named flagName: its size, or for "" the machine's
// available memory (0: no limit known or wanted), and where it came from.
func memoryLimit(value, flagName string) (int64, string, error) {
	switch value {
	case "":
		avail, err := availableMemory()
		if err != nil {
			return 0, "", nil // unknown: no check
		}
		return avail, "the machine's available memory (MemAvailable)", nil
	case "0":
		return 0, "", nil
	}
	n, err := parseBytes(value)
	if err != nil {
		return 0, "", fmt.Errorf("%s: %w", flagName, err)
	}
	return n, flagName, nil
}

// checkMemory refuses, before anything starts, a run whose estimated peak
// exceeds the limit.
func (f *simFlags) checkMemory(cfgs []embedded.Config) error {
	limit, source, err := memoryLimit(f.maxMemory, "--max-memory")
	if err != nil || limit == 0 {
		return err
	}
	for _, c := range cfgs {
		need, how := c.MemoryEstimate()
		if need > limit {
			return fmt.Errorf("mode %s seed %d needs an estimated %s (%s), more than the %s of %s; lower --nodes or --degree, or raise --max-memory (0 disables the check)",
				c.Mode, c.Seed, embedded.FormatBytes(need), how, embedded.FormatBytes(limit), source)
		}
	}
	return nil
}

// parseBytes reads a size as go-humanize does: a byte count with an
// optional unit, decimal (kB, MB, GB, TB: powers of 1000) or binary (KiB,
// MiB, GiB, TiB: powers of 1024), case-insensitive, the B optional ("12G"
// is 12 GB, "12Gi" 12 GiB). GOMEMLIMIT's units (B, KiB, MiB, GiB, TiB) are
// among them.
func parseBytes(s string) (int64, error) {
	n, err := humanize.ParseBytes(strings.TrimSpace(s))
	if err != nil || n > math.MaxInt64 {
		return 0, fmt.Errorf("%q is not a size (e.g. 12GiB; 12GB is 12·10⁹ bytes)", s)
	}
	return int64(n), nil
}

// availableMemory reads MemAvailable from /proc/meminfo.
func availableMemory() (int64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemAvailable:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return 0, err
			}
			return kb << 10, nil
		}
	}
	return 0, errors.New("no MemAvailable in /proc/meminfo")
}

// simRun is one entry of the --json output.
type simRun struct {
	Summary     embedded.Summary   `json:"summary"`
	ColdSummary embedded.Summary   `json:"cold_summary"`
	WallSecs    float64            `json:"wall_seconds"`
	Result      *embedded.Result   `json:"result"`
	Endpoints   embedded.Endpoints `json:"endpoints"`
}

// runSim runs the simulations inside testing.Main: synctest.Test needs a
// *testing.T, and testing.Main is the documented entry "for other systems
// that simulate go test". testing.Main would print PASS, or "--- FAIL: sim"
// and FAIL, once the test function returns, and then exit; everything this
// command reports is written before then, so the test's last cleanup exits
// with the command's status itself. Only a failure the testing package
// recorded (a t.Fatal inside the bubble) is left to testing.Main to print,
// with its messages, on stderr (the framework's stdout is pointed there).
//
// Every input is checked, and the memory estimate held against the
// machine's, before the first network starts: configuration, every output
// path (--json, --endpoints, --cpuprofile, --memprofile) and the --serve
// address. SIGINT or SIGTERM during a simulation exits at once (130): a
// bubble cannot be cancelled, and its outputs are written only when
// complete; while serving, they stop the server and the command returns.
func runSim(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	f, err := parseSimFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	var cfgs []embedded.Config
	if err == nil {
		cfgs, err = f.configs()
	}
	if err == nil {
		err = f.checkMemory(cfgs)
	}
	if err == nil {
		err = f.checkOutputs()
	}
	if err != nil {
		return usageError(stderr, "sim", err)
	}
	if f.procs > 0 {
		runtime.GOMAXPROCS(f.procs)
	}
	var serving atomic.Bool
	go func() {
		<-ctx.Done()
		if !serving.Load() {
			fmt.Fprintln(stderr, "segdiff sim: interrupted; stopping")
			os.Exit(130)
		}
	}()
	body := func(t *testing.T) {
		code := 0
		// Registered first, so it runs after every cleanup the simulation
		// registers (its temporary folders).
		t.Cleanup(func() {
			if !t.Failed() {
				os.Exit(code)
			}
		})
		if err := simulateAll(ctx, t, f, cfgs, &serving, stdout, stderr); err != nil {
			fmt.Fprintf(stderr, "segdiff sim: %v\n", err)
			code = 1
		}
	}
	os.Args = []string{os.Args[0], "-test.run=^sim$", "-test.timeout=0"}
	os.Stdout = os.Stderr
	match := func(pat, str string) (bool, error) { return regexp.MatchString(pat, str) }
	testing.Main(match, []testing.InternalTest{{Name: "sim", F: body}}, nil, nil)
	return 1 // not reached: the body's cleanup or testing.Main exits
}

// checkOutputs checks, before anything starts, that every output file can
// be written and the --serve address can be listened on, leaving nothing
// behind: a run of tens of minutes must not fail at its end for a typo.
func (f *simFlags) checkOutputs() error {
	for _, o := range []struct{ flag, path string }{
		{"--json", f.jsonPath}, {"--endpoints", f.endpoints}, {"--cpuprofile", f.cpuProfile}, {"--memprofile", f.memProfile},
	} {
		if o.path == "" {
			continue
		}
		if err := checkWritable(o.path); err != nil {
			return fmt.Errorf("%s %s: %w", o.flag, o.path, err)
		}
	}
	if f.serve != "" {
		if _, _, err := net.SplitHostPort(f.serve); err != nil {
			return fmt.Errorf("--serve %q: %w", f.serve, err)
		}
		l, err := net.Listen("tcp", f.serve)
		if err != nil {
			return fmt.Errorf("--serve %s: %w", f.serve, err)
		}
		l.Close()
	}
	return nil
}

// checkWritable checks that path can be created or replaced (directly, or
// through a temporary file renamed over it) without creating or changing
// anything: its directory exists and takes a new file, and path, if it
// exists, is a file open for writing.
func checkWritable(path string) error {
	if fi, err := os.Stat(path); err == nil {
		if fi.IsDir() {
			return errors.New("is a directory")
		}
		w, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return pathCause(err)
		}
		w.Close()
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	switch {
	case err != nil:
		return fmt.Errorf("directory %s: %w", dir, pathCause(err))
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	}
	probe, err := os.CreateTemp(dir, ".segdiff-write-check-")
	if err != nil {
		return fmt.Errorf("directory %s: %w", dir, pathCause(err))
	}
	probe.Close()
	return os.Remove(probe.Name())
}

// pathCause is a path error's cause alone (the caller names the path).
func pathCause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func simulateAll(ctx context.Context, t *testing.T, f *simFlags, cfgs []embedded.Config, serving *atomic.Bool, stdout, stderr io.Writer) error {
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
	for i, c := range cfgs {
		start := time.Now()
		fmt.Fprintf(stderr, "run %d/%d: mode %s seed %d, %d nodes, %d payloads\n", i+1, len(cfgs), c.Mode, c.Seed, c.Nodes, c.Payloads)
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
		s, cold, err := res.Summarize()
		if err != nil {
			return fmt.Errorf("mode %s seed %d: %w", c.Mode, c.Seed, err)
		}
		fmt.Fprintf(stderr, "run done: mode %s seed %d nodes %d payloads %d in %.1fs wall: setup %.1fs (%v virtual), %.1fs per payload slot (median), peak RSS so far %s\n",
			c.Mode, c.Seed, c.Nodes, c.Payloads, wall.Seconds(), res.SetupWall.Seconds(), res.Setup.Round(time.Millisecond), res.MedianSlotWall().Seconds(), peakRSS())
		sums = append(sums, s)
		runs = append(runs, simRun{Summary: s, ColdSummary: cold, WallSecs: wall.Seconds(), Result: res, Endpoints: embedded.EndpointsOf(res, "")})
	}
	if err := embedded.WriteSummaryTable(stdout, sums); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	// The log's notes scroll away; the table's reader sees them again here.
	var caveats []string
	for _, c := range cfgs {
		if cv := c.ModelCaveat(); cv != "" && !slices.Contains(caveats, cv) {
			caveats = append(caveats, cv)
			fmt.Fprintln(stdout, "note: "+cv)
		}
	}
	if f.jsonPath != "" {
		b, err := json.MarshalIndent(runs, "", "  ")
		if err != nil {
			return fmt.Errorf("encode results: %w", err)
		}
		if err := atomicfile.Write(f.jsonPath, b, 0o644); err != nil {
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
	if f.serve != "" {
		serving.Store(true)
		srv, err := embedded.Serve(f.serve, res)
		if err != nil {
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
	if f.serve != "" {
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
