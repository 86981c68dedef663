package embedded

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/segdiff/segdiff/internal/devnet"
)

// BinaryEnv names an environment variable that points the backend at a
// prebuilt segdiff binary instead of building one with `go build`.
const BinaryEnv = "SEGDIFF_BIN"

func init() {
	devnet.Register("embedded", Open, devnet.WithPreflight(preflight), devnet.WithShutdown(removeBuild),
		devnet.WithConfigCheck(func(cfg devnet.Config) error { _, err := SpecOf(cfg); return err }))
}

// preflight checks that a simulation can be started: SEGDIFF_BIN names an
// executable, or the go command is there to build one.
func preflight(context.Context) error {
	if bin := os.Getenv(BinaryEnv); bin != "" {
		if _, err := os.Stat(bin); err != nil {
			return fmt.Errorf("%s: %w", BinaryEnv, err)
		}
		return nil
	}
	if _, err := exec.LookPath("go"); err != nil {
		return fmt.Errorf("no %s and no go command to build segdiff: %w", BinaryEnv, err)
	}
	return nil
}

// Open is the embedded backend's opener. It runs the simulation in a
// subprocess — `segdiff sim --serve 127.0.0.1:0 --endpoints FILE` — so the
// synctest bubble lives in its own process and the suite scrapes every
// node's metrics over real HTTP, exactly as it would a client. Progress
// passes through to stderr. Open returns once the endpoints file exists;
// Close stops the subprocess.
//
// cfg.Preset names one of Presets ("ci" when empty); Mode, Nodes and Seed
// override the preset when non-zero. Open does not validate the spec: the
// suite checked it before any devnet opened (devnet.CheckConfig, SpecOf),
// and the simulation process validates the spec it reads before it starts
// anything (a process boundary).
func Open(ctx context.Context, cfg devnet.Config) (devnet.Devnet, error) {
	bin, err := segdiffBinary(ctx)
	if err != nil {
		return nil, err
	}
	preset := cfg.Preset
	if preset == "" {
		preset = PresetCI
	}
	spec, err := specOf(cfg)
	if err != nil {
		return nil, err // devnet.Open names the devnet
	}
	dir, err := os.MkdirTemp("", "segdiff-embedded-")
	if err != nil {
		return nil, fmt.Errorf("open embedded devnet: %w", err)
	}
	endpoints, specPath := filepath.Join(dir, "endpoints.json"), filepath.Join(dir, "spec.json")
	if err := WriteSpec(specPath, spec); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	cmd := exec.Command(bin, "sim", "--spec", specPath, "--serve", "127.0.0.1:0", "--endpoints", endpoints)
	// The simulation's progress (and its summary table) reaches the user
	// on stderr, each line labelled with the devnet it comes from.
	label := fmt.Sprintf("[embedded %s] ", describeConfig(cfg, preset))
	out := newLineWriter(os.Stderr, label)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = childAttr()
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	d := &embeddedDevnet{cmd: cmd, exited: make(chan struct{}), dir: dir, out: out, preset: preset}
	go func() {
		d.waitErr = cmd.Wait()
		close(d.exited)
	}()
	e, err := waitEndpoints(ctx, endpoints, d, 200*time.Millisecond)
	if err != nil {
		d.Close()
		return nil, err
	}
	if cfg.Mode != "" && e.Mode != cfg.Mode {
		d.Close()
		return nil, fmt.Errorf("open embedded devnet: simulation ran mode %q, want %q", e.Mode, cfg.Mode)
	}
	d.e = e
	slices.SortFunc(d.e.Nodes, func(a, b devnet.Node) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	return d, nil
}

// waitEndpoints polls for the endpoints file every interval until it
// exists, the subprocess exits or ctx ends. Not poll.Until: there is no
// deadline, and the subprocess's exit must end the wait at once.
func waitEndpoints(ctx context.Context, path string, d *embeddedDevnet, interval time.Duration) (Endpoints, error) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		if _, err := os.Stat(path); err == nil {
			return ReadEndpoints(path)
		}
		select {
		case <-d.exited:
			return Endpoints{}, fmt.Errorf("embedded simulation exited before serving: %v", d.waitErr)
		case <-ctx.Done():
			return Endpoints{}, fmt.Errorf("wait for embedded simulation: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

// build is the binary this process built (no SEGDIFF_BIN), kept for every
// devnet it opens and removed by the backend's shutdown hook.
var build struct {
	mu  sync.Mutex
	dir string
	bin string
}

// segdiffBinary returns $SEGDIFF_BIN, or builds cmd/segdiff once per
// process (a failed or interrupted build is not cached).
func segdiffBinary(ctx context.Context) (string, error) {
	if bin := os.Getenv(BinaryEnv); bin != "" {
		if _, err := os.Stat(bin); err != nil {
			return "", fmt.Errorf("%s: %w", BinaryEnv, err)
		}
		return bin, nil
	}
	build.mu.Lock()
	defer build.mu.Unlock()
	if build.bin != "" {
		return build.bin, nil
	}
	dir, err := os.MkdirTemp("", "segdiff-bin-")
	if err != nil {
		return "", fmt.Errorf("build segdiff: %w", err)
	}
	bin := filepath.Join(dir, "segdiff")
	fmt.Fprintf(os.Stderr, "segdiff: building the segdiff CLI for the embedded devnet (set %s to skip)\n", BinaryEnv)
	out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/segdiff/segdiff/cmd/segdiff").CombinedOutput()
	if err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("build segdiff (run inside the segdiff module, or set %s): %w\n%s", BinaryEnv, err, out)
	}
	build.dir, build.bin = dir, bin
	return bin, nil
}

// removeBuild deletes the binary segdiffBinary built, if any.
func removeBuild() error {
	build.mu.Lock()
	defer build.mu.Unlock()
	if build.dir == "" {
		return nil
	}
	err := os.RemoveAll(build.dir)
	build.dir, build.bin = "", ""
	if err != nil {
		return fmt.Errorf("remove built segdiff: %w", err)
	}
	return nil
}

// describeConfig labels a devnet in progress lines: "segmented seed 7".
func describeConfig(cfg devnet.Config, preset string) string {
	parts := []string{string(cfg.Mode)}
	if cfg.Mode == "" {
		parts[0] = "default mode"
	}
	if cfg.Seed != 0 {
		parts = append(parts, fmt.Sprintf("seed %d", cfg.Seed))
	}
	if cfg.Nodes != 0 {
		parts = append(parts, fmt.Sprintf("%d nodes", cfg.Nodes))
	}
	if len(cfg.Stress) > 0 {
		parts = append(parts, "stress "+cfg.Stress.String())
	}
	if preset != PresetCI {
		parts = append(parts, "preset "+preset)
	}
	return strings.Join(parts, " ")
}

// embeddedDevnet is a served simulation. Its data is fixed once Open
// returns, so it is safe for concurrent use.
type embeddedDevnet struct {
	cmd       *exec.Cmd
	exited    chan struct{} // closed when the subprocess has exited
	waitErr   error         // its exit status, set before exited closes
	dir       string
	out       *lineWriter
	preset    string
	e         Endpoints
	closeOnce sync.Once
	closeErr  error
}

func (d *embeddedDevnet) Backend() string { return "embedded" }

// Finished implements devnet.Finished: the simulation has run every slot
// before it serves.
func (d *embeddedDevnet) Finished() bool { return true }

// Describe implements devnet.Describer from the simulation's own config.
func (d *embeddedDevnet) Describe() devnet.Description {
	c := d.e.Config
	roles := map[string]int{}
	for _, n := range d.e.Nodes {
		for _, r := range n.Roles {
			roles[string(r)]++
		}
	}
	return devnet.Description{Mode: c.Mode, Seed: c.Seed, Nodes: c.Nodes, Preset: d.preset, Roles: roles}
}

func (d *embeddedDevnet) Nodes(context.Context) ([]devnet.Node, error) {
	return slices.Clone(d.e.Nodes), nil
}

func (d *embeddedDevnet) Timing(context.Context) (devnet.Timing, error) { return d.e.Timing, nil }

func (d *embeddedDevnet) PTC(_ context.Context, slot uint64) (devnet.PTCVotes, error) {
	for _, v := range d.e.PTC {
		if v.Slot == slot {
			return v, nil
		}
	}
	return devnet.PTCVotes{}, fmt.Errorf("embedded devnet slot %d (payload slots %d..%d): %w", slot, firstSlot(d.e), lastSlot(d.e), devnet.ErrNoVotes)
}

func firstSlot(e Endpoints) uint64 {
	if len(e.Slots) == 0 {
		return 0
	}
	return e.Slots[0].Slot
}

func lastSlot(e Endpoints) uint64 {
	if len(e.Slots) == 0 {
		return 0
	}
	return e.Slots[len(e.Slots)-1].Slot
}

func (d *embeddedDevnet) PrometheusURL() string { return "" }

// Close interrupts the subprocess (it stops serving and exits), kills it
// if it has not exited within 10 s, and removes its temporary files.
func (d *embeddedDevnet) Close() error {
	d.closeOnce.Do(func() {
		if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
			d.closeErr = fmt.Errorf("stop embedded simulation: %w", err)
		}
		// The folder goes before the wait: a second interrupt exits the
		// process at once, and the kernel then kills the simulation
		// (Pdeathsig), but nothing would remove a folder left for later.
		// The simulation writes nothing there once it serves.
		os.RemoveAll(d.dir)
		select {
		case <-d.exited:
		case <-time.After(10 * time.Second):
			_ = d.cmd.Process.Kill()
			<-d.exited
		}
		d.out.Flush()
	})
	return d.closeErr
}

// SpecOf is the run spec of the devnet cfg selects, validated: the backend's
// config check, which the suite's preflight runs once for every devnet a
// run will open, so that a bad stress or an impossible network fails before
// any opens.
func SpecOf(cfg devnet.Config) (Config, error) {
	spec, err := specOf(cfg)
	if err != nil {
		return Config{}, err
	}
	return spec, spec.Validate()
}

// specOf is the run spec of the devnet cfg selects, unvalidated:
// cfg.Preset ("ci" by default) with cfg's mode, nodes and seed where set,
// under cfg.Stress as parsed where it was written.
func specOf(cfg devnet.Config) (Config, error) {
	spec, err := Preset(cfg.Preset)
	if err != nil {
		return Config{}, err
	}
	if cfg.Mode != "" {
		spec.Mode = cfg.Mode
	}
	if cfg.Nodes != 0 {
		spec.Nodes = cfg.Nodes
	}
	if cfg.Seed != 0 {
		spec.Seed = cfg.Seed
	}
	if err := spec.setStress(cfg.Stress); err != nil {
		return Config{}, err
	}
	return spec, nil
}
