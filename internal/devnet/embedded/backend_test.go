package embedded_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/segdiff/segdiff/internal/devnet"
	"github.com/segdiff/segdiff/internal/devnet/embedded"
	"github.com/segdiff/segdiff/internal/stress"
)

// fakeSimHead starts a fake sim script: $out is the --endpoints path.
const fakeSimHead = `#!/bin/sh
out=""
while [ $# -gt 0 ]; do
  if [ "$1" = "--endpoints" ]; then out="$2"; fi
  shift
done
`

// fakeSim writes a stand-in for `segdiff sim`: a shell script that writes
// the endpoints file its --endpoints flag names atomically, as the real
// command does (or fails) and then waits to
// be interrupted, like the real command with --serve.
func fakeSim(t *testing.T, endpoints embedded.Endpoints, fail bool) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "endpoints.json")
	if err := embedded.WriteEndpoints(src, endpoints); err != nil {
		t.Fatal(err)
	}
	body := fakeSimHead
	if fail {
		body += "echo 'simulation failed' >&2\nexit 3\n"
	} else {
		body += "echo \"$*\" > /dev/null\ncp " + src + " \"$out.tmp\" && mv \"$out.tmp\" \"$out\"\ntrap 'exit 0' TERM INT\nwhile :; do sleep 0.1; done\n"
	}
	bin := filepath.Join(dir, "segdiff")
	if err := os.WriteFile(bin, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

func testEndpoints() embedded.Endpoints {
	return embedded.Endpoints{
		Backend: "embedded",
		Mode:    devnet.ModeSegmented,
		Nodes: []devnet.Node{
			{ID: "node-001", Roles: []devnet.Role{devnet.RoleNode}, LinkClass: devnet.LinkHome, MetricsURL: "http://127.0.0.1:1/nodes/node-001/metrics"},
			{ID: "node-000", Roles: []devnet.Role{devnet.RoleBuilder}, LinkClass: devnet.LinkHome, MetricsURL: "http://127.0.0.1:1/nodes/node-000/metrics"},
		},
		Timing: devnet.Timing{Genesis: time.Date(2000, 1, 1, 0, 0, 3, 0, time.UTC), SlotDuration: 12 * time.Second, PayloadDueBPS: 5000},
		PTC:    []devnet.PTCVotes{{Slot: 1, Size: 512, PayloadPresent: 400, Source: "embedded"}},
		Slots:  []embedded.EndpointSlot{{Slot: 1}},
	}
}

// The backend's config check, which the suite's preflight runs before any
// devnet opens, refuses what the simulation would refuse, without building
// or starting anything (no SEGDIFF_BIN, no go build).
func TestConfigCheck(t *testing.T) {
	t.Setenv(embedded.BinaryEnv, filepath.Join(t.TempDir(), "no-such-binary"))
	for _, tt := range []struct {
		cfg     devnet.Config
		wantErr string
	}{
		{cfg: devnet.Config{Mode: devnet.ModeSegmented, Stress: stress.Set{"withholder": 0.5}}},
		{cfg: devnet.Config{Nodes: 2}, wantErr: "nodes: 2, want 3.."},
		{cfg: devnet.Config{Stress: stress.Set{"withholders": 0.5}}, wantErr: `"withholders" is not a key of the run spec`},
		{cfg: devnet.Config{Mode: devnet.ModeWhole, Stress: stress.Set{"omit": 1}}, wantErr: "whose payload is one message"},
		{cfg: devnet.Config{Preset: "huge"}, wantErr: "unknown embedded preset"},
	} {
		err := devnet.CheckConfig("embedded", tt.cfg)
		if (tt.wantErr == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("CheckConfig(%s) = %v, want %q", tt.cfg, err, tt.wantErr)
		}
	}
}

func TestOpen(t *testing.T) {
	tests := []struct {
		name    string
		fail    bool
		cfg     devnet.Config
		wantErr string
	}{
		{name: "serves", cfg: devnet.Config{Mode: devnet.ModeSegmented}},
		{name: "mode mismatch", cfg: devnet.Config{Mode: devnet.ModeWhole}, wantErr: `ran mode "segmented", want "whole"`},
		{name: "simulation fails", fail: true, wantErr: "exited before serving"},
		{name: "unknown preset", cfg: devnet.Config{Preset: "huge"}, wantErr: "unknown embedded preset"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(embedded.BinaryEnv, fakeSim(t, testEndpoints(), tt.fail))
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			d, err := devnet.Open(ctx, "embedded", tt.cfg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Open() error = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Open(): %v", err)
			}
			nodes, err := d.Nodes(ctx)
			if err != nil || len(nodes) != 2 || nodes[0].ID != "node-000" {
				t.Errorf("Nodes() = %v, %v; want node-000 first of 2", nodes, err)
			}
			timing, _ := d.Timing(ctx)
			if timing.PayloadDueBPS != 5000 || timing.SlotDuration != 12*time.Second {
				t.Errorf("Timing() = %+v", timing)
			}
			if v, err := d.PTC(ctx, 1); err != nil || v.PayloadPresent != 400 || !v.Timely() {
				t.Errorf("PTC(1) = %+v, %v", v, err)
			}
			if _, err := d.PTC(ctx, 9); !errors.Is(err, devnet.ErrNoVotes) {
				t.Errorf("PTC(9) error = %v, want ErrNoVotes", err)
			}
			if d.Backend() != "embedded" || d.PrometheusURL() != "" {
				t.Errorf("Backend() = %q, PrometheusURL() = %q", d.Backend(), d.PrometheusURL())
			}
			start := time.Now()
			if err := d.Close(); err != nil {
				t.Errorf("Close(): %v", err)
			}
			if time.Since(start) > 5*time.Second {
				t.Errorf("Close took %v: the subprocess ignored SIGTERM", time.Since(start))
			}
		})
	}
}

// Close removes the devnet's temporary folder before it waits for the
// simulation to exit, so a second interrupt, which exits the process at
// once, leaves no folder behind.
func TestCloseRemovesFolderBeforeWaiting(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "endpoints.json")
	if err := embedded.WriteEndpoints(src, testEndpoints()); err != nil {
		t.Fatal(err)
	}
	where, exited := filepath.Join(dir, "where"), filepath.Join(dir, "exited")
	body := fakeSimHead + `echo "$out" > ` + where + `
cp ` + src + ` "$out.tmp" && mv "$out.tmp" "$out"
trap 'sleep 3; touch ` + exited + `; exit 0' TERM
while :; do sleep 0.1; done
`
	bin := filepath.Join(dir, "segdiff")
	if err := os.WriteFile(bin, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(embedded.BinaryEnv, bin)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := devnet.Open(ctx, "embedded", devnet.Config{Mode: devnet.ModeSegmented})
	if err != nil {
		t.Fatalf("Open(): %v", err)
	}
	b, err := os.ReadFile(where)
	if err != nil {
		t.Fatal(err)
	}
	folder := filepath.Dir(strings.TrimSpace(string(b)))
	closed := make(chan error, 1)
	go func() { closed <- d.Close() }()
	for {
		if _, err := os.Stat(folder); errors.Is(err, os.ErrNotExist) {
			break
		}
		select {
		case err := <-closed:
			t.Fatalf("Close returned (%v) with %s still there", err, folder)
		case <-time.After(20 * time.Millisecond):
		}
	}
	if _, err := os.Stat(exited); err == nil {
		t.Error("the folder went only after the simulation exited")
	}
	if err := <-closed; err != nil {
		t.Errorf("Close(): %v", err)
	}
	if _, err := os.Stat(exited); err != nil {
		t.Errorf("Close returned before the simulation exited: %v", err)
	}
}
