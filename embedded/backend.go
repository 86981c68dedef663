package embedded

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/segdiff/segdiff/devnet"
)

// BinaryEnv names an environment variable that points the backend at a
// prebuilt segdiff binary instead of building one with `go build`.
const BinaryEnv = "SEGDIFF_BIN"

func init() { devnet.Register("embedded", Open) }

// Open is the embedded backend's opener. It runs the simulation in a
// subprocess — `segdiff sim --serve 127.0.0.1:0 --endpoints FILE` — so the
// synctest bubble lives in its own process and the suite scrapes every
// node's metrics over real HTTP, exactly as it would a client. Progress
// passes through to stderr. Open returns once the endpoints file exists;
// Close stops the subprocess.
//
// cfg.Preset selects "ci" (default) or "study-500"; Mode, Nodes and Seed
// override the preset when non-zero.
func Open(ctx context.Context, cfg devnet.Config) (devnet.Devnet, error) {
	bin, err := segdiffBinary(ctx)
	if err != nil {
		return nil, err
	}
	preset := cfg.Preset
	if preset == "" {
		preset = PresetCI
	}
	if _, err := Preset(preset); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "segdiff-embedded-")
	if err != nil {
		return nil, fmt.Errorf("open embedded devnet: %w", err)
	}
	endpoints := filepath.Join(dir, "endpoints.json")
	args := []string{"sim", "--preset", preset, "--serve", "127.0.0.1:0", "--endpoints", endpoints}
	if cfg.Mode != "" {
		args = append(args, "--mode", string(cfg.Mode))
	}
	if cfg.Nodes != 0 {
		args = append(args, "--nodes", strconv.Itoa(cfg.Nodes))
	}
	if cfg.Seed != 0 {
		args = append(args, "--seed", strconv.FormatInt(cfg.Seed, 10))
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout = os.Stderr // the summary table is progress here
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	d := &embeddedDevnet{cmd: cmd, exited: make(chan struct{}), dir: dir}
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
// exists, the subprocess exits or ctx ends.
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

var buildOnce = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "segdiff-bin-")
	if err != nil {
		return "", fmt.Errorf("build segdiff: %w", err)
	}
	bin := filepath.Join(dir, "segdiff")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/segdiff/segdiff/cmd/segdiff").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("build segdiff (run inside the segdiff module, or set %s): %w\n%s", BinaryEnv, err, out)
	}
	return bin, nil
})

// segdiffBinary returns $SEGDIFF_BIN, or builds cmd/segdiff once per process.
func segdiffBinary(ctx context.Context) (string, error) {
	if bin := os.Getenv(BinaryEnv); bin != "" {
		if _, err := os.Stat(bin); err != nil {
			return "", fmt.Errorf("%s: %w", BinaryEnv, err)
		}
		return bin, nil
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return buildOnce()
}

// embeddedDevnet is a served simulation. Its data is fixed once Open
// returns, so it is safe for concurrent use.
type embeddedDevnet struct {
	cmd       *exec.Cmd
	exited    chan struct{} // closed when the subprocess has exited
	waitErr   error         // its exit status, set before exited closes
	dir       string
	e         Endpoints
	closeOnce sync.Once
	closeErr  error
}

func (d *embeddedDevnet) Backend() string { return "embedded" }

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
		defer os.RemoveAll(d.dir)
		if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
			d.closeErr = fmt.Errorf("stop embedded simulation: %w", err)
		}
		select {
		case <-d.exited:
		case <-time.After(10 * time.Second):
			_ = d.cmd.Process.Kill()
			<-d.exited
		}
	})
	return d.closeErr
}

// EndpointsData returns the descriptor the devnet was opened from (slots,
// configuration); callers must not modify it.
func (d *embeddedDevnet) EndpointsData() Endpoints { return d.e }
