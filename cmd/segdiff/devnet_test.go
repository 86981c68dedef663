package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/segdiff/segdiff/internal/devnet/kurtosis"
	"github.com/segdiff/segdiff/internal/devnet/kurtosis/kurtosistest"
)

var (
	repoClients  = filepath.Join("..", "..", "client-patches", "clients.yaml")
	repoParams   = filepath.Join("..", "..", "network-params", "segmented.yaml")
	repoPackage  = filepath.Join("..", "..", "kurtosis")
	devnetOutput = `{"segdiff_nodes": [{"id": "cl-1-prysm-geth", "cl_service": "cl-1-prysm-geth", "el_service": "el-1-geth-prysm",
	  "client": "prysm", "link_class": "home", "roles": ["node", "proposer", "builder"]}],
	  "prometheus_service": "segdiff-prometheus", "grafana_service": "", "mode": "segmented",
	  "seconds_per_slot": 12, "slot_duration_ms": 12000, "payload_due_bps": 5000}`
)

func TestDevnetUsage(t *testing.T) {
	t.Setenv(kurtosis.EnvPackageSources, "") // the params check comes first without sources
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStderr string
	}{
		{name: "no subcommand", args: nil, wantCode: 2, wantStderr: "no subcommand given (one of up, wait, down, status)"},
		{name: "unknown subcommand", args: []string{"start"}, wantCode: 2, wantStderr: `unknown subcommand "start"`},
		{name: "up without params", args: []string{"up", "--enclave", "x"}, wantCode: 2, wantStderr: "--params is required"},
		{name: "stray argument", args: []string{"down", "--enclave", "x", "now"}, wantCode: 2, wantStderr: "unexpected arguments"},
		{name: "unknown flag", args: []string{"status", "--params", "p.yaml"}, wantCode: 2, wantStderr: "flag provided but not defined"},
		{name: "help", args: []string{"help"}, wantCode: 0, wantStderr: "segdiff devnet status"},
		{name: "params check runs first", args: []string{"up", "--params", "nope.yaml", "--clients", repoClients}, wantCode: 1, wantStderr: "read network params"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := runDevnet(context.Background(), tt.args, &stdout, &stderr); code != tt.wantCode {
				t.Errorf("exit code %d, want %d\nstderr: %s", code, tt.wantCode, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.wantStderr, stderr.String())
			}
		})
	}
}

// TestDevnetUpWithoutEngine_FailsFast is `make devnet-up` on a machine
// without a Kurtosis engine: exit 1 within seconds, saying how to start one.
func TestDevnetUpWithoutEngine_FailsFast(t *testing.T) {
	t.Setenv(kurtosis.EnvPackageSources, "")
	kurtosistest.LockEnginePort(t)
	l, err := net.Listen("tcp", kurtosistest.EngineAddress)
	if err != nil {
		t.Skipf("%s is in use (%v); cannot test the no-engine path here", kurtosistest.EngineAddress, err)
	}
	l.Close()
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	for _, args := range [][]string{
		{"up", "--params", repoParams, "--clients", repoClients, "--package", repoPackage, "--enclave", "segdiff", "--endpoints-dir", t.TempDir()},
		{"down", "--enclave", "segdiff", "--endpoints-dir", t.TempDir()},
		{"status", "--enclave", "segdiff"},
	} {
		var stdout, stderr bytes.Buffer
		start := time.Now()
		code := runDevnet(context.Background(), args, &stdout, &stderr)
		elapsed := time.Since(start)
		if code != 1 {
			t.Errorf("devnet %s: exit %d, want 1\nstderr: %s", args[0], code, stderr.String())
		}
		for _, want := range []string{"127.0.0.1:9710", "kurtosis engine start", "Docker"} {
			if !strings.Contains(stderr.String(), want) {
				t.Errorf("devnet %s stderr lacks %q:\n%s", args[0], want, stderr.String())
			}
		}
		if elapsed > 5*time.Second {
			t.Errorf("devnet %s took %v to fail, want seconds", args[0], elapsed)
		}
	}
}

// TestDevnetLifecycleWithRepoPackage uploads the repository's own kurtosis/
// package and network-params through the unmodified SDK to the fake engine.
func TestDevnetLifecycleWithRepoPackage(t *testing.T) {
	t.Setenv(kurtosis.EnvPackageSources, "") // the committed package as is
	eng := kurtosistest.Start(t)
	eng.APIC.Script(kurtosistest.EndEOF, kurtosistest.Lines(kurtosistest.Interpreting(),
		kurtosistest.Instruction(1, 1, "add_service", "Adding service cl-1-prysm-geth", "ok"),
		[]*kurtosistest.Line{kurtosistest.Success(devnetOutput)})...)
	eng.APIC.AddService("cl-1-prysm-geth", map[string]uint32{"http": 34001, "metrics": 34002})
	eng.APIC.AddService("el-1-geth-prysm", map[string]uint32{"rpc": 34003, "metrics": 34004})
	eng.APIC.AddService("segdiff-prometheus", map[string]uint32{"http": 34010})
	dir := t.TempDir()

	var stdout, stderr bytes.Buffer
	code := runDevnet(context.Background(), []string{"up", "--params", repoParams, "--clients", repoClients, "--package", repoPackage,
		"--enclave", "cli", "--endpoints-dir", dir, "--progress-slots", "0"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("devnet up: exit %d\nstderr: %s", code, stderr.String())
	}
	id, files := eng.APIC.Package()
	if id != "github.com/segdiff/segdiff/kurtosis" || files["main.star"] == nil || files["kurtosis.yml"] == nil {
		t.Errorf("uploaded package %q with files %v", id, kurtosistest.SortedFiles(files))
	}
	sent := eng.APIC.RunArgs().GetSerializedParams()
	if strings.Contains(sent, "@clients/") || !json.Valid([]byte(sent)) {
		t.Errorf("params sent unresolved or not JSON: %s", sent)
	}
	if !strings.Contains(stdout.String(), "http://127.0.0.1:34010") {
		t.Errorf("up stdout: %s", stdout.String())
	}

	stdout.Reset()
	if code := runDevnet(context.Background(), []string{"status", "--enclave", "cli", "--endpoints-dir", dir, "--json"}, &stdout, &stderr); code != 0 {
		t.Fatalf("devnet status: exit %d\nstderr: %s", code, stderr.String())
	}
	e, err := kurtosis.ParseEndpoints(stdout.Bytes())
	if err != nil || e.Nodes[0].MetricsURL != "http://127.0.0.1:34002/metrics" {
		t.Errorf("status --json = %v, %v\n%s", e, err, stdout.String())
	}
	if code := runDevnet(context.Background(), []string{"down", "--enclave", "cli", "--endpoints-dir", dir}, &stdout, &stderr); code != 0 {
		t.Fatalf("devnet down: exit %d\nstderr: %s", code, stderr.String())
	}
	if got := eng.Enclaves(); len(got) != 0 {
		t.Errorf("enclaves after down: %v", got)
	}
}

// TestDevnetUpPackageSources: --package-sources, and SEGDIFF_PACKAGE_SOURCES
// as its default, reach Up, which refuses a bad archive before it asks any
// engine.
func TestDevnetUpPackageSources(t *testing.T) {
	tampered := kurtosistest.WriteSources(t, nil)
	if err := os.WriteFile(filepath.Join(tampered, "redis-package.tar.gz"), []byte("tampered"), 0o644); err != nil {
		t.Fatal(err)
	}
	incomplete := kurtosistest.WriteSources(t, nil)
	if err := os.Remove(filepath.Join(incomplete, "db-adminer-package.tar.gz")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, env  string
		args       []string
		wantStderr string
	}{
		{name: "flag", args: []string{"--package-sources", tampered}, wantStderr: "redis-package.tar.gz has sha256"},
		{name: "environment", env: tampered, wantStderr: "redis-package.tar.gz has sha256"},
		{name: "the flag wins over the environment", env: tampered, args: []string{"--package-sources", incomplete}, wantStderr: "db-adminer-package.tar.gz is missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(kurtosis.EnvPackageSources, tt.env)
			var stdout, stderr bytes.Buffer
			args := append([]string{"up", "--params", repoParams, "--clients", repoClients, "--package", repoPackage, "--enclave", "sources",
				"--endpoints-dir", t.TempDir()}, tt.args...)
			if code := runDevnet(context.Background(), args, &stdout, &stderr); code != 1 {
				t.Errorf("exit %d, want 1\nstderr: %s", code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.wantStderr) || strings.Contains(stderr.String(), "9710") {
				t.Errorf("stderr lacks %q (or reached for the engine):\n%s", tt.wantStderr, stderr.String())
			}
		})
	}
}
