package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// runCLI runs `segdiff patches args...` from the repository root.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := runPatches(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func repoManifest(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "client-patches", "clients.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPatchesCheck_Repository(t *testing.T) {
	code, out, errs := runCLI(t, "check", "--manifest", repoManifest(t))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "prysm-segmented: 6 patches") {
		t.Fatalf("output: %s", out)
	}
}

// corruptCopy copies the demo manifest to a temp dir with patch 0002's first
// hunk header changed to claim one more new line.
func corruptCopy(t *testing.T) (manifest, patch string) {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join("..", "..", "clientpatch", "testdata", "good")
	for _, name := range []string{"clients.yaml", "Dockerfile", "p/0001-metrics.patch", "p/0002-blocks.patch"} {
		data, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	patch = filepath.Join(dir, "p", "0002-blocks.patch")
	data, _ := os.ReadFile(patch)
	i := bytes.Index(data, []byte("\n@@ -"))
	j := bytes.Index(data[i+1:], []byte(" @@")) + i + 1
	header := string(data[i+1 : j+3])
	plus := strings.LastIndex(header, ",")
	var n int
	if _, err := fmtSscan(header[plus+1:len(header)-3], &n); err != nil {
		t.Fatalf("parse %q: %v", header, err)
	}
	bad := header[:plus+1] + itoa(n+1) + " @@"
	data = bytes.Replace(data, []byte(header), []byte(bad), 1)
	if err := os.WriteFile(patch, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "clients.yaml"), patch
}

func TestPatchesCheck_CorruptedNamesHunk(t *testing.T) {
	manifest, patch := corruptCopy(t)
	code, _, errs := runCLI(t, "check", "--manifest", manifest)
	if code != 1 {
		t.Fatalf("exit %d, want 1: %s", code, errs)
	}
	if !strings.Contains(errs, patch+": hunk 1 (@@ ") || !strings.Contains(errs, "new lines, body has") {
		t.Fatalf("error does not name the file and hunk: %s", errs)
	}
}

func TestPatchesBuild_NoDocker(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no docker, whatever the machine has
	code, _, errs := runCLI(t, "build", "--manifest", repoManifest(t), "--client", "prysm-segmented", "--source", t.TempDir())
	if code != 1 || !strings.Contains(errs, "Docker is required") {
		t.Fatalf("exit %d: %s", code, errs)
	}
}

func TestPatchesApply_ConflictNamesFile(t *testing.T) {
	src := t.TempDir() // not the pinned tree: pubsub.go is missing its context
	if err := os.MkdirAll(filepath.Join(src, "beacon-chain", "p2p"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "beacon-chain", "p2p", "service.go"), []byte("package p2p\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI(t, "apply", "--manifest", repoManifest(t), "--client", "prysm-segmented", "--source", src)
	if code != 1 || !strings.Contains(errs, "0002-p2p-record-beacon-block-arrival-and-install-times.patch does not apply") ||
		!strings.Contains(errs, "beacon-chain/p2p/") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(src, "beacon-chain", "p2p", "payloaddiffusion")); err == nil {
		t.Fatal("a failed apply left patch 0001's files behind")
	}
}

func TestPatchesMatrix(t *testing.T) {
	code, out, errs := runCLI(t, "matrix", "--manifest", repoManifest(t))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var m struct {
		Include []matrixEntry `json:"include"`
	}
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	built, baseline := 0, 0
	for _, e := range m.Include {
		if e.Params == "" || e.Image == "" {
			t.Errorf("entry without params or image: %+v", e)
		}
		if e.Build {
			built++
			if e.Repo == "" || e.Branch == "" || len(e.Commit) != 40 {
				t.Errorf("buildable entry without its source: %+v", e)
			}
		} else {
			baseline++
		}
	}
	if built == 0 || baseline == 0 {
		t.Fatalf("want buildable and published-image jobs, got %+v", m.Include)
	}
}

func TestPatchesUsage(t *testing.T) {
	if code, _, _ := runCLI(t); code != 2 {
		t.Fatalf("no subcommand: exit %d, want 2", code)
	}
	if code, _, errs := runCLI(t, "frobnicate", "--manifest", repoManifest(t)); code != 2 || !strings.Contains(errs, "unknown subcommand") {
		t.Fatalf("exit %d: %s", code, errs)
	}
}

func fmtSscan(s string, n *int) (int, error) { return fmt.Sscan(s, n) }
func itoa(n int) string                      { return strconv.Itoa(n) }
