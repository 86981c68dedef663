package clientpatch_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/segdiff/segdiff/internal/repo"

	"github.com/segdiff/segdiff/internal/clientpatch"
)

func TestLoadFile_Repository(t *testing.T) {
	m, err := clientpatch.LoadFile(repo.Path(t, clientpatch.DefaultPath))
	if err != nil {
		t.Fatalf("the repository's manifest must load: %v", err)
	}
	c, ok := m.Lookup("prysm-segmented")
	if !ok || !c.Buildable() || len(c.Patches) == 0 {
		t.Fatalf("prysm-segmented: want a buildable entry with patches, got %+v", c)
	}
	for _, p := range m.PatchPaths(c) {
		if _, err := clientpatch.ParsePatchFile(p); err != nil {
			t.Errorf("patch %s: %v", p, err)
		}
	}
}

func TestLoadFile_Good(t *testing.T) {
	m, err := clientpatch.LoadFile("testdata/good/clients.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(m.Names(), ","); got != "demo-segmented,geth-gloas" {
		t.Fatalf("names: got %s", got)
	}
	c, _ := m.Lookup("demo-segmented")
	if c.Line() != 3 || c.Build.Args["GO_VERSION"] != "1.26" {
		t.Fatalf("entry: line %d args %v", c.Line(), c.Build.Args)
	}
}

// writeManifest writes a manifest plus the files the good one needs into a
// temporary directory and returns its path.
func writeManifest(t *testing.T, yaml string, extra map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{"Dockerfile": "FROM scratch\nCOPY b /beacon-chain\n", "p/0001-a.patch": "x", "p/0002-b.patch": "x"}
	for k, v := range extra {
		files[k] = v
	}
	files["clients.yaml"] = yaml
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "clients.yaml")
}

const goodEntry = `version: 1
clients:
  - name: a
    layer: cl
    type: prysm
    repo: o/r
    branch: main
    commit: 0123456789abcdef0123456789abcdef01234567
    patches: [p/0001-a.patch, p/0002-b.patch]
    build: {dockerfile: Dockerfile}
    image: x/y:z
`

func TestLoadFile_Bad(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		extra   map[string]string
		wantErr []string // substrings, all required
	}{
		{"unknown key", strings.Replace(goodEntry, "    image: x/y:z\n", "    image: x/y:z\n    imgae: typo\n", 1), nil,
			[]string{"clients.yaml:12:", `unknown key "imgae"`}},
		{"wrong type", strings.Replace(goodEntry, "patches: [p/0001-a.patch, p/0002-b.patch]", "patches: {a: b}", 1), nil,
			[]string{"clients.yaml:9:"}},
		{"short commit", strings.Replace(goodEntry, "0123456789abcdef0123456789abcdef01234567", "abc123", 1), nil,
			[]string{"clients.yaml:3:", "clients[0] (a).commit", "40 lower-case hex"}},
		{"repo form", strings.Replace(goodEntry, "repo: o/r", "repo: https://github.com/o/r", 1), nil,
			[]string{"(a).repo", "owner/name"}},
		{"missing patch", strings.Replace(goodEntry, "p/0002-b.patch]", "p/0002-c.patch]", 1), nil,
			[]string{"(a).patches", "0002-c.patch: no such file", "p/0002-b.patch is in the patch directory but not listed"}},
		{"out of order", strings.Replace(goodEntry, "[p/0001-a.patch, p/0002-b.patch]", "[p/0002-b.patch, p/0001-a.patch]", 1), nil,
			[]string{"out of order: want number 0001"}},
		{"bad patch name", strings.Replace(goodEntry, "p/0002-b.patch]", "p/0002-b.patch, p/extra.diff]", 1), map[string]string{"p/extra.diff": "x"},
			[]string{`want NNNN-name.patch, got "p/extra.diff"`}},
		{"untagged image", strings.Replace(goodEntry, "image: x/y:z", "image: x/y", 1), nil,
			[]string{"(a).image", "tagged Docker reference"}},
		{"frame image", strings.Replace(goodEntry, "image: x/y:z", "image: x/frame:z", 1), nil,
			[]string{"FRAMES"}},
		{"reference as image", strings.Replace(goodEntry, "image: x/y:z", `image: "@clients/b"`, 1), nil,
			[]string{"is a reference"}},
		{"duplicate name", goodEntry + "  - name: a\n    layer: el\n    type: geth\n    image: x/g:1\n", nil,
			[]string{"clients.yaml:12:", "clients[1] (a).name: duplicate of clients[0] (line 3)"}},
		{"bad layer", strings.Replace(goodEntry, "layer: cl", "layer: vc", 1), nil,
			[]string{`(a).layer: want "cl" or "el", got "vc"`}},
		{"el params on cl", strings.Replace(goodEntry, "    image: x/y:z\n", "    image: x/y:z\n    el_extra_params: [--x]\n", 1), nil,
			[]string{"cannot carry EL parameters"}},
		{"no dockerfile", strings.Replace(goodEntry, "dockerfile: Dockerfile", "dockerfile: nope/Dockerfile", 1), nil,
			[]string{"build.dockerfile: nope/Dockerfile: no such file"}},
		{"prebuilt with patches", "version: 1\nclients:\n  - name: b\n    layer: el\n    type: geth\n    image: x/g:1\n    patches: [p/0001-a.patch]\n", nil,
			[]string{"(b).repo: missing, but branch/commit/patches/build are set"}},
		{"unknown source", strings.Replace(goodEntry, "    image: x/y:z\n", "    image: x/y:z\n    sources: [contract, events]\n", 1), nil,
			[]string{`(a).sources: entry 1: unknown source "events"; use contract, standard-api, topic-bytes`}},
		{"source twice", strings.Replace(goodEntry, "    image: x/y:z\n", "    image: x/y:z\n    sources: [contract, contract]\n", 1), nil,
			[]string{`(a).sources: entry 1: contract listed twice`}},
		{"sources on an el entry", goodEntry + "  - name: g\n    layer: el\n    type: geth\n    image: x/g:1\n    sources: [standard-api]\n", nil,
			[]string{`(g).sources: only a cl entry offers measurement sources`}},
		{"bad mode", strings.Replace(goodEntry, "    image: x/y:z\n", "    image: x/y:z\n    mode: fast\n", 1), nil,
			[]string{`(a).mode: want one of whole, segmented, segmented-batch, got "fast"`}},
		{"unknown role", strings.Replace(goodEntry, "    image: x/y:z\n", "    image: x/y:z\n    roles: {byzantine: [--x]}\n", 1), nil,
			[]string{`(a).roles.byzantine: unknown role "byzantine"; use one of withholder, silent, mute, unacking-withholder, under-reporter, padding-under-reporter`}},
		{"relay mapped", strings.Replace(goodEntry, "    image: x/y:z\n", "    image: x/y:z\n    roles: {relay: [--x]}\n", 1), nil,
			[]string{"(a).roles.relay: relay is every client's default and takes no parameters"}},
		{"role without flags", strings.Replace(goodEntry, "    image: x/y:z\n", "    image: x/y:z\n    roles: {mute: []}\n", 1), nil,
			[]string{"(a).roles.mute: no parameters"}},
		{"role flag not a flag", strings.Replace(goodEntry, "    image: x/y:z\n", "    image: x/y:z\n    roles: {mute: [mute]}\n", 1), nil,
			[]string{`(a).roles.mute: entry 0: want a flag starting with '-', got "mute"`}},
		{"roles on an el entry", "version: 1\nclients:\n  - name: b\n    layer: el\n    type: geth\n    image: x/g:1\n    roles: {mute: [--x]}\n", nil,
			[]string{"(b).roles: only a cl entry can map roles"}},
		{"version", strings.Replace(goodEntry, "version: 1", "version: 2", 1), nil,
			[]string{"version: want 1, got 2"}},
		{"empty", "", nil, []string{"empty file"}},
		{"syntax", "version: 1\nclients: [\n", nil, []string{"clients.yaml:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeManifest(t, tt.yaml, tt.extra)
			_, err := clientpatch.LoadFile(path)
			if err == nil {
				t.Fatal("want an error, got none")
			}
			if !errors.Is(err, clientpatch.ErrInvalid) {
				t.Errorf("error does not wrap ErrInvalid: %v", err)
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q\n  does not contain %q", err, want)
				}
			}
		})
	}
}
