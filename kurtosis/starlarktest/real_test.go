package starlarktest_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/segdiff/segdiff/clientpatch"
	"github.com/segdiff/segdiff/kurtosis/starlarktest"
	"github.com/segdiff/segdiff/params"
)

// loadReal finds the real-package checkouts once per test binary.
var loadReal = sync.OnceValues(starlarktest.RealEthereumPackage)

// realPackage returns the checkout of ethereum-package named by
// SEGDIFF_ETHPKG_DIR, skipping the test (with how to enable it) when the
// variable is unset. A checkout at another commit than params pins, or an
// import without a checkout, fails the test: the mode exists to prove the
// pinned code.
func realPackage(t *testing.T) *starlarktest.RealPackage {
	t.Helper()
	rp, err := loadReal()
	if errors.Is(err, starlarktest.ErrRealPackageOff) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	switch rp.Commit {
	case params.EthereumPackageCommit:
	case "":
		t.Logf("%s is not a git checkout; assuming it is at %s", rp.Dir, params.EthereumPackageCommit)
	default:
		t.Fatalf("%s is at %s, but the package pins ethereum-package %s", rp.Dir, rp.Commit, params.EthereumPackageCommit)
	}
	if missing := rp.MissingImports(); len(missing) > 0 {
		t.Fatalf("ethereum-package imports packages with no checkout: %s", strings.Join(missing, "; "))
	}
	return rp
}

// realBackend serves the ethereum-package import from the checkout.
func realBackend(t *testing.T) backend {
	t.Helper()
	return backend{name: "real", opts: realPackage(t).Options()}
}

// backends are the stand-in and, in the real-package mode, the real
// package: tests over both prove the stand-in equal to the real code on
// their inputs.
func backends(t *testing.T) []backend {
	t.Helper()
	if _, err := loadReal(); errors.Is(err, starlarktest.ErrRealPackageOff) {
		t.Log(err)
		return []backend{standIn}
	}
	return []backend{standIn, realBackend(t)}
}

// TestRealNetworkParamsFilesRun: every network-params file runs through the
// real ethereum-package's run() under our package.
func TestRealNetworkParamsFilesRun(t *testing.T) {
	plans := checkNetworkParamsFiles(t, realBackend(t))
	if len(plans) < 5 {
		t.Errorf("ran %d network-params files through the real package, want all 5", len(plans))
	}
}

// TestParticipantShapes: the node list (ids in order, roles from each
// participant's validator_count) for participant shapes whose expansion
// differs between a naive reading and input_parser.star at the pinned
// commit. The wants were derived by reading parse_network_params; in the
// real-package mode the real package must produce them too, which proves the
// stand-in and participants.star equal to it on these shapes.
func TestParticipantShapes(t *testing.T) {
	const np = "network_params: {preset: mainnet}\n"
	tests := []struct {
		name, args string
		want       []string // id:roles
	}{
		{"no participants: one default", np,
			[]string{"cl-1-lighthouse-geth:node,proposer"}},
		{"count", "participants: [{cl_type: prysm, count: 2}, {validator_count: 0}]\n" + np,
			[]string{"cl-1-prysm-geth:node,proposer", "cl-2-prysm-geth:node,proposer", "cl-3-lighthouse-geth:node"}},
		{"matrix only: no default participant, cl entry with its own count", `
participants_matrix:
  el: [{el_type: geth}]
  cl: [{cl_type: prysm, count: 2}, {cl_type: lighthouse, validator_count: 0}]
` + np,
			[]string{"cl-1-prysm-geth:node,proposer", "cl-2-prysm-geth:node,proposer", "cl-3-lighthouse-geth:node"}},
		{"participants then matrix x count", `
participants: [{cl_type: teku, el_type: geth}]
participants_matrix:
  el: [{el_type: geth}, {el_type: reth}]
  cl: [{cl_type: prysm}]
  count: 2
` + np,
			[]string{"cl-1-teku-geth:node,proposer", "cl-2-prysm-geth:node,proposer", "cl-3-prysm-geth:node,proposer",
				"cl-4-prysm-reth:node,proposer", "cl-5-prysm-reth:node,proposer"}},
		{"vc entries override the cl entry's validator_count", `
participants_matrix:
  el: [{el_type: geth}]
  cl: [{cl_type: prysm, validator_count: 0, supernode: true}]
  vc: [{validator_count: 64}, {vc_type: prysm}]
` + np,
			[]string{"cl-1-prysm-geth:node,proposer", "cl-2-prysm-geth:node"}},
		{"matrix without el adds nobody", `
participants: [{cl_type: prysm}]
participants_matrix:
  cl: [{cl_type: lighthouse}]
` + np,
			[]string{"cl-1-prysm-geth:node,proposer"}},
		{"num_validator_keys_per_node 0", "participants: [{count: 2}, {validator_count: 8, supernode: true}]\nnetwork_params: {num_validator_keys_per_node: 0}\n",
			[]string{"cl-1-lighthouse-geth:node", "cl-2-lighthouse-geth:node", "cl-3-lighthouse-geth:node,proposer"}},
	}
	for _, b := range backends(t) {
		for _, tt := range tests {
			t.Run(b.name+"/"+tt.name, func(t *testing.T) {
				_, out := mustRunOn(t, b, tt.args, "docker")
				var got []string
				for _, n := range out.SegdiffNodes {
					got = append(got, n.ID+":"+strings.Join(n.Roles, ","))
				}
				if !slices.Equal(got, tt.want) {
					t.Errorf("nodes\n got %v\nwant %v", got, tt.want)
				}
			})
		}
	}
}

// TestRealPrysmLauncherExecsImageBinary: the command the real prysm
// launcher builds for our patched image executes a path that image's
// Dockerfile provides (clientpatch.LauncherBinaries is checked against the
// real launcher, and the Dockerfile against the table).
func TestRealPrysmLauncherExecsImageBinary(t *testing.T) {
	plans := checkNetworkParamsFiles(t, realBackend(t))
	m, err := clientpatch.LoadFile(filepath.Join(packageDir, "..", clientpatch.DefaultPath))
	if err != nil {
		t.Fatal(err)
	}
	c, ok := m.Lookup("prysm-segmented")
	if !ok {
		t.Fatal("no prysm-segmented entry in clients.yaml")
	}
	dockerfile, err := os.ReadFile(filepath.Join(m.Dir(), filepath.FromSlash(c.Build.Dockerfile)))
	if err != nil {
		t.Fatal(err)
	}
	files, err := clientpatch.ImageFiles(dockerfile)
	if err != nil {
		t.Fatal(err)
	}
	p := plans["segmented.yaml"]
	if p == nil {
		t.Fatal("segmented.yaml did not run")
	}
	checked := 0
	for _, name := range p.ServiceNames() {
		svc := p.Services[name]
		if svc.Image != c.Image || !strings.HasPrefix(name, "cl-") {
			continue
		}
		checked++
		bin, err := execTarget(svc.Entrypoint, svc.Cmd)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want := clientpatch.LauncherBinary(c.Layer, c.Type); bin != want {
			t.Errorf("%s: the real launcher executes %s, clientpatch.LauncherBinaries says %s", name, bin, want)
		}
		if !slices.Contains(files, bin) {
			t.Errorf("%s: the real launcher executes %s, which %s does not put in the image (it has %v)", name, bin, c.Build.Dockerfile, files)
		}
	}
	if checked == 0 {
		t.Fatalf("segmented.yaml launched no CL with image %s; services: %v", c.Image, p.ServiceNames())
	}
}

// execTarget returns the program a container runs: the first word after the
// last "exec " of an `sh -c` command, else the entrypoint or first cmd word.
func execTarget(entrypoint, cmd []string) (string, error) {
	if len(entrypoint) == 2 && entrypoint[0] == "sh" && entrypoint[1] == "-c" && len(cmd) == 1 {
		script := cmd[0]
		if i := strings.LastIndex(script, "exec "); i >= 0 {
			script = script[i+len("exec "):]
		}
		if f := strings.Fields(script); len(f) > 0 {
			return f[0], nil
		}
		return "", fmt.Errorf("empty sh -c command")
	}
	if len(entrypoint) > 0 {
		return entrypoint[0], nil
	}
	if len(cmd) > 0 {
		return cmd[0], nil
	}
	return "", fmt.Errorf("no entrypoint and no cmd: the image's own ENTRYPOINT runs")
}
