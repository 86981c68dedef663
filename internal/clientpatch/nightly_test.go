package clientpatch_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/segdiff/segdiff/diffusion/role"

	"github.com/segdiff/segdiff/internal/repo"

	"github.com/segdiff/segdiff/internal/clientpatch"
)

// TestNightly_Repository: every shipped network-params file is one nightly
// devnet job, stress-withholders.yaml under the client that maps the
// withholder role, and the patched image is built once for all its jobs.
func TestNightly_Repository(t *testing.T) {
	m, n, err := clientpatch.LoadNightly(repo.Path(t, clientpatch.DefaultPath))
	if err != nil {
		t.Fatal(err)
	}
	shipped, _ := filepath.Glob(repo.Path(t, clientpatch.ParamsDir, "*.yaml"))
	if n.Shipped != len(shipped) || len(shipped) < 6 {
		t.Fatalf("shipped %d, glob %d, want the 6 or more network-params files", n.Shipped, len(shipped))
	}
	jobs := map[string]clientpatch.DevnetJob{}
	for _, j := range n.Devnets {
		jobs[j.Params] = j
	}
	for _, f := range shipped {
		if _, ok := jobs[clientpatch.ParamsDir+"/"+filepath.Base(f)]; !ok {
			t.Errorf("%s has no nightly job", f)
		}
	}
	stress, ok := jobs["network-params/stress-withholders.yaml"]
	c, _ := m.Lookup(stress.Client)
	if !ok || c == nil || c.Roles[role.Withholder.Name] == nil {
		t.Errorf("stress-withholders.yaml: job %+v, want it under a client that maps withholder", stress)
	}
	if len(n.Images) != 1 || n.Images[0].Client != "prysm-segmented" {
		t.Fatalf("images %+v, want prysm-segmented built once", n.Images)
	}
	uses := 0
	for _, j := range n.Devnets {
		if len(j.Images) > 0 {
			uses++
			if !reflect.DeepEqual(j.Images, []string{n.Images[0].Image}) {
				t.Errorf("%s loads %v, want [%s]", j.Params, j.Images, n.Images[0].Image)
			}
		}
	}
	if uses < 4 {
		t.Errorf("%d devnet jobs load the built image, want the 4 or more that run prysm-segmented", uses)
	}
	checkClientJobs(t, m, n)
}

const nightlyManifest = `version: 1
clients:
  - name: a
    layer: cl
    type: prysm
    repo: o/r
    branch: main
    commit: 0123456789abcdef0123456789abcdef01234567
    patches: [p/0001-a.patch]
    build: {dockerfile: Dockerfile}
    image: x/a:1
    roles: {withholder: [--role=withholder]}
    params: [network-params/one.yaml, network-params/stress.yaml]
  - name: whole
    layer: cl
    type: prysm
    image: x/whole:1
    params: [network-params/whole.yaml]
  - name: el
    layer: el
    type: geth
    image: x/el:1
`

func participant(cl, role string) string {
	s := "participants:\n  - {cl_type: prysm, cl_image: \"@clients/" + cl + "\", el_type: geth, el_image: \"@clients/el\""
	if role != "" {
		s += ", segdiff: {role: " + role + "}"
	}
	return s + "}\n"
}

// writeRepo lays out a repository: client-patches/clients.yaml with the
// files it needs, and the network-params files.
func writeRepo(t *testing.T, manifest string, params map[string]string) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"client-patches/clients.yaml":         manifest,
		"client-patches/Dockerfile":           "FROM scratch\nCOPY b /beacon-chain\n",
		"client-patches/p/0001-a.patch":       "x",
		"network-params/one.yaml":             participant("a", ""),
		"network-params/stress.yaml":          participant("a", "withholder"),
		"network-params/whole.yaml":           participant("whole", ""),
		"network-params/not-params/README.md": "not a params file",
	}
	for k, v := range params {
		files[k] = v
	}
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if body == "-" {
			continue // a directory only: the file is left out
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(root, "client-patches", "clients.yaml")
}

func TestNightly(t *testing.T) {
	tests := []struct {
		name         string
		manifest     string
		params       map[string]string
		wantDevnets  map[string][]string // params -> images
		wantErr      string
		wantLoadFail bool
	}{
		{name: "one job per params file, the built image once", manifest: nightlyManifest,
			wantDevnets: map[string][]string{"network-params/one.yaml": {"x/a:1"}, "network-params/stress.yaml": {"x/a:1"}, "network-params/whole.yaml": {}}},
		{name: "a shipped file no client lists", manifest: nightlyManifest, params: map[string]string{"network-params/extra.yaml": participant("a", "")},
			wantErr: "network-params/extra.yaml is in no client's params, so no nightly job runs it; add it to the params of the client it runs, or to nightly_exempt with the reason"},
		{name: "a shipped file exempt with its reason", manifest: nightlyManifest + "nightly_exempt:\n  network-params/extra.yaml: needs a 64-core runner\n",
			params:      map[string]string{"network-params/extra.yaml": participant("a", "")},
			wantDevnets: map[string][]string{"network-params/one.yaml": {"x/a:1"}, "network-params/stress.yaml": {"x/a:1"}, "network-params/whole.yaml": {}}},
		{name: "an exemption without a reason", manifest: nightlyManifest + "nightly_exempt:\n  network-params/extra.yaml: \"\"\n",
			wantErr: "nightly_exempt.network-params/extra.yaml: no reason", wantLoadFail: true},
		{name: "an exempt file a client lists", manifest: nightlyManifest + "nightly_exempt:\n  network-params/one.yaml: slow\n",
			wantErr: "nightly_exempt.network-params/one.yaml: a client lists it in params, so it is not exempt"},
		{name: "an exempt file that does not exist", manifest: nightlyManifest + "nightly_exempt:\n  network-params/gone.yaml: slow\n",
			wantErr: "nightly_exempt.network-params/gone.yaml: no such file"},
		{name: "a listed file that does not exist", manifest: nightlyManifest, params: map[string]string{"network-params/whole.yaml": "-"},
			wantErr: "clients[1] (whole).params: entry 0: network-params/whole.yaml: no such file"},
		{name: "a listed file that does not run its client", manifest: strings.Replace(nightlyManifest, "[network-params/whole.yaml]", "[network-params/whole.yaml, network-params/one.yaml]", 1),
			wantErr: "clients[1] (whole).params: entry 1: network-params/one.yaml runs no participant on @clients/whole (it runs: a, el)"},
		{name: "a role the client has no flags for", manifest: nightlyManifest, params: map[string]string{"network-params/whole.yaml": participant("whole", "withholder")},
			wantErr: `client "whole" has no flag for role withholder`},
		{name: "an unknown client", manifest: nightlyManifest, params: map[string]string{"network-params/whole.yaml": participant("whole", "") + "  - {cl_type: prysm, cl_image: \"@clients/nope\"}\n"},
			wantErr: `unknown client "nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := clientpatch.LoadFile(writeRepo(t, tt.manifest, tt.params))
			if tt.wantLoadFail {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("LoadFile err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			n, err := m.Nightly()
			if errorCase(t, err, tt.wantErr) {
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error is not one line: %q", err)
				}
				return
			}
			got := map[string][]string{}
			for _, j := range n.Devnets {
				got[j.Params] = j.Images
			}
			if !reflect.DeepEqual(got, tt.wantDevnets) {
				t.Errorf("devnets %v, want %v", got, tt.wantDevnets)
			}
			want := []clientpatch.ImageJob{{Client: "a", Repo: "o/r", Branch: "main", Commit: "0123456789abcdef0123456789abcdef01234567", Image: "x/a:1", Artifact: "client-image-a"}}
			if !reflect.DeepEqual(n.Images, want) {
				t.Errorf("images %+v, want %+v", n.Images, want)
			}
		})
	}
}

// Each devnet job's tag filter follows from its CL clients' sources.
func TestNightlyTags(t *testing.T) {
	const base = "@kurtosis && ~@slow && ~@broken"
	patched := &clientpatch.Client{Layer: clientpatch.LayerCL, Sources: []string{"contract", "standard-api", "topic-bytes"}}
	prysm := &clientpatch.Client{Layer: clientpatch.LayerCL, Sources: []string{"standard-api", "topic-bytes"}}
	teku := &clientpatch.Client{Layer: clientpatch.LayerCL, Sources: []string{"standard-api"}}
	unlisted := &clientpatch.Client{Layer: clientpatch.LayerCL} // the standard API alone
	contractOnly := &clientpatch.Client{Layer: clientpatch.LayerCL, Sources: []string{"contract"}}
	tests := []struct {
		name string
		cls  []*clientpatch.Client
		want string
	}{
		{"patched", []*clientpatch.Client{patched}, base},
		{"unpatched with a byte counter", []*clientpatch.Client{prysm}, base + " && ~@contract"},
		{"unpatched without one", []*clientpatch.Client{teku}, base + " && ~@bytes && ~@contract"},
		{"no sources listed", []*clientpatch.Client{unlisted}, base + " && ~@bytes && ~@contract"},
		{"contract without the standard API", []*clientpatch.Client{contractOnly}, base + " && ~@contract"},
		{"mixed", []*clientpatch.Client{patched, prysm}, base + ",@mixed"},
		{"mixed with a client without bytes", []*clientpatch.Client{patched, teku}, base + " && ~@bytes,@mixed"},
		{"no CL", nil, base + " && ~@bytes && ~@contract"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := clientpatch.NightlyTags(tt.cls); got != tt.want {
				t.Errorf("NightlyTags = %q, want %q", got, tt.want)
			}
		})
	}
}

// checkClientJobs: every consensus client ethereum-package runs on a
// glamsterdam devnet has a whole-message entry with a nightly job; the
// mixed devnet compares the populations; no unpatched client's job runs
// the agreement of sources.
func checkClientJobs(t *testing.T, m *clientpatch.Manifest, n *clientpatch.Nightly) {
	t.Helper()
	tags := map[string]string{}
	for _, j := range n.Devnets {
		tags[j.Client+" "+j.Params] = j.Tags
	}
	for _, cl := range []string{"prysm", "lighthouse", "teku", "lodestar", "nimbus", "grandine"} {
		found := false
		for _, c := range m.Clients {
			if c.Layer == clientpatch.LayerCL && c.Type == cl && c.Mode == "whole" && len(c.Patches) == 0 && len(c.Params) > 0 {
				found = true
				for _, p := range c.Params {
					if tg := tags[c.Name+" "+p]; !strings.Contains(tg, "~@contract") {
						t.Errorf("%s %s runs %q: an unpatched client cannot hold the contract to the standard API", c.Name, p, tg)
					}
				}
			}
		}
		if !found {
			t.Errorf("no whole-message %s entry with a nightly job", cl)
		}
	}
	if tg := tags["prysm-segmented network-params/mixed.yaml"]; !strings.HasSuffix(tg, ",@mixed") {
		t.Errorf("the mixed devnet runs %q, want @mixed opted in", tg)
	}
	if tg := tags["prysm-segmented network-params/segmented.yaml"]; strings.Contains(tg, "~@bytes") || strings.Contains(tg, "~@contract") || strings.Contains(tg, "@mixed") {
		t.Errorf("the patched devnet runs %q, want every @kurtosis scenario", tg)
	}
}
