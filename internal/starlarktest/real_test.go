package starlarktest_test

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/segdiff/segdiff/internal/clientpatch"
	"github.com/segdiff/segdiff/internal/params"
	"github.com/segdiff/segdiff/internal/params/paramstest"
	"github.com/segdiff/segdiff/internal/starlarktest"
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

// TestRealBadParams runs every file of internal/params/testdata/bad through
// the real ethereum-package under our package: each must fail with the
// message the checker (params) reports for it, so checker and real code
// agree on every trap of the corpus. A runs-with trap must run, launching a service whose
// command shows how the package misread it.
func TestRealBadParams(t *testing.T) {
	b := realBackend(t)
	cases, err := paramstest.LoadBadCases(filepath.Join(packageDir, "..", "internal", "params", "testdata", "bad"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.Path), func(t *testing.T) {
			privileged := strings.Contains(string(c.Data), "disruptoor")
			p, _, err := runWith(t, b, string(c.Data), "docker", privileged)
			if c.RunsWith != "" {
				if err != nil {
					t.Fatalf("the real package fails (%v); the header says it runs with %q", err, c.RunsWith)
				}
				for _, name := range p.ServiceNames() {
					svc := p.Services[name]
					if strings.Contains(strings.Join(append(slices.Clone(svc.Entrypoint), svc.Cmd...), " "), c.RunsWith) {
						return
					}
				}
				t.Fatalf("no service the real package launches has %q in its command (services: %v)", c.RunsWith, p.ServiceNames())
			}
			if err == nil {
				t.Fatalf("the real package accepted it; want an error containing %q", c.Want)
			}
			if !strings.Contains(err.Error(), c.Want) {
				t.Errorf("error %v\nwant it to contain %q (the checker's message)", err, c.Want)
			}
		})
	}
}

// TestRealKeyTables compares params' tables with the real sanity_check.star
// and constants.star at the pinned commit.
func TestRealKeyTables(t *testing.T) {
	rp := realPackage(t)
	r, err := starlarktest.New(packageDir, rp.Options()...)
	if err != nil {
		t.Fatal(err)
	}
	sanity, err := r.Globals(starlarktest.EthereumPackageName + "/src/package_io/sanity_check.star")
	if err != nil {
		t.Fatal(err)
	}
	consts, err := r.Globals(starlarktest.EthereumPackageName + "/src/package_io/constants.star")
	if err != nil {
		t.Fatal(err)
	}
	same := func(what string, real any, ours []string) {
		t.Helper()
		got := stringsOf(real)
		if l, ok := real.([]string); ok {
			got = l
		}
		if m, ok := real.(map[string]any); ok {
			got = nil
			for k := range m {
				got = append(got, k)
			}
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(ours))
		if !slices.Equal(got, want) {
			t.Errorf("%s:\n real %v\n ours %v", what, got, want)
		}
	}
	field := func(v any, keys ...string) any {
		for _, k := range keys {
			v = v.(map[string]any)[k]
		}
		return v
	}
	same("PARTICIPANT_CATEGORIES.participants", field(sanity["PARTICIPANT_CATEGORIES"], "participants"), params.ParticipantKeys)
	matrix := field(sanity["PARTICIPANT_MATRIX_PARAMS"], "participants_matrix").(map[string]any)
	same("PARTICIPANT_MATRIX_PARAMS layers", matrix, slices.Collect(maps.Keys(params.ParticipantMatrixKeys)))
	for layer, keys := range params.ParticipantMatrixKeys {
		same("PARTICIPANT_MATRIX_PARAMS."+layer, matrix[layer], keys)
	}
	pp := field(sanity["PORT_PUBLISHER_PARAMS"], "port_publisher").(map[string]any)
	same("PORT_PUBLISHER_PARAMS groups", pp, params.PortPublisherGroups)
	for _, g := range params.PortPublisherGroups {
		same("PORT_PUBLISHER_PARAMS."+g, pp[g], params.PortPublisherGroupKeys)
	}
	sub := sanity["SUBCATEGORY_PARAMS"].(map[string]any)
	same("SUBCATEGORY_PARAMS blocks", sub, slices.Collect(maps.Keys(params.BlockKeys)))
	for block, keys := range params.BlockKeys {
		same("SUBCATEGORY_PARAMS."+block, sub[block], keys)
	}
	same("ADDITIONAL_SERVICES_PARAMS", sanity["ADDITIONAL_SERVICES_PARAMS"], params.AdditionalServices)
	same("ADDITIONAL_CATEGORY_PARAMS", sanity["ADDITIONAL_CATEGORY_PARAMS"], params.ScalarKeys)
	nested := params.NestedBlocks["trueblocks_params"]
	tn := sanity["TRUEBLOCKS_NESTED_PARAMS"].(map[string]any)
	same("TRUEBLOCKS_NESTED_PARAMS", tn, slices.Collect(maps.Keys(nested.Sub)))
	for k, keys := range nested.Sub {
		same("TRUEBLOCKS_NESTED_PARAMS."+k, tn[k], keys)
	}
	// The special keys are an argument in sanity_check(), not a table.
	src, err := os.ReadFile(filepath.Join(rp.Dir, "src", "package_io", "sanity_check.star"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`"trueblocks_params",\s*TRUEBLOCKS_NESTED_PARAMS,\s*\[([^\]]*)\]`).FindSubmatch(src)
	if m == nil {
		t.Fatal("sanity_check.star: no validate_nested_params call for trueblocks_params")
	}
	same("trueblocks_params special keys", stringsOf(quoted(string(m[1]))), nested.Special)

	values := func(name string, drop ...string) []string {
		var out []string
		for _, v := range consts[name].(map[string]any) {
			if s := v.(string); !slices.Contains(drop, s) {
				out = append(out, s)
			}
		}
		return out
	}
	// reth-builder is internal (MEV), none is el_type: null.
	same("constants.EL_TYPE", values("EL_TYPE", "reth-builder", "none"), params.ELTypes)
	same("constants.CL_TYPE", values("CL_TYPE"), params.CLTypes)
	same("constants.VC_TYPE", values("VC_TYPE"), params.VCTypes)
	same("constants.GLOBAL_LOG_LEVEL", values("GLOBAL_LOG_LEVEL", "custom"), params.LogLevels)
	var mev []string
	for name, v := range consts {
		if s, ok := v.(string); ok && strings.HasSuffix(name, "_MEV_TYPE") {
			mev = append(mev, s)
		}
	}
	same("constants.*_MEV_TYPE", mev, params.MEVTypes)

	// Which launchers map global_log_level "custom".
	var custom []string
	err = filepath.WalkDir(filepath.Join(rp.Dir, "src"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".star") {
			return err
		}
		data, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(data), "constants.GLOBAL_LOG_LEVEL.custom") {
			rel, _ := filepath.Rel(filepath.Join(rp.Dir, "src"), filepath.Dir(p))
			custom = append(custom, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	same("launchers mapping custom log level", custom, params.CustomLogLevelClients)
}

// quoted returns the double-quoted strings of a Starlark list body.
func quoted(s string) []any {
	var out []any
	for _, m := range regexp.MustCompile(`"([^"]*)"`).FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}
