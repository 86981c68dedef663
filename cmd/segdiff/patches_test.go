package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/segdiff/segdiff/internal/repo"
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
	src := repo.Path(t, "internal", "clientpatch", "testdata", "good")
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
		!strings.Contains(errs, "beacon-chain/p2p/") || strings.Count(errs, "\n") != 1 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(src, "beacon-chain", "p2p", "payloaddiffusion")); err == nil {
		t.Fatal("a failed apply left patch 0001's files behind")
	}
}

// TestPatchesMatrixTagsOf: --for-params prints one params file's tag filter
// (what .ci/real-devnet runs the suite with), and refuses a file no job runs.
func TestPatchesMatrixTagsOf(t *testing.T) {
	code, out, errs := runCLI(t, "matrix", "--manifest", repoManifest(t), "--for-params", "network-params/whole.yaml")
	if code != 0 || out != "@kurtosis && ~@slow && ~@broken && ~@bytes && ~@contract\n" {
		t.Errorf("exit %d, stdout %q, stderr %q; want whole.yaml's filter (stock Prysm: no byte counter, no contract)", code, out, errs)
	}
	code, _, errs = runCLI(t, "matrix", "--manifest", repoManifest(t), "--for-params", "network-params/none.yaml")
	if code != 1 || !strings.Contains(errs, "--for-params network-params/none.yaml: 0 devnet jobs' tag filters") {
		t.Errorf("unknown params: exit %d, stderr %q", code, errs)
	}
}

// TestPatchesMatrix: the nightly plan builds each patched image in one job
// and every devnet job that runs it names it to load; published images are
// not built; every shipped network-params file is a devnet job.
func TestPatchesMatrix(t *testing.T) {
	code, out, errs := runCLI(t, "matrix", "--manifest", repoManifest(t))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var m struct {
		Images struct {
			Include []map[string]any `json:"include"`
		} `json:"images"`
		Devnets struct {
			Include []struct {
				Client string   `json:"client"`
				Params string   `json:"params"`
				Images []string `json:"images"`
				Tags   string   `json:"tags"`
			} `json:"include"`
		} `json:"devnets"`
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("decode %s: %v", out, err)
	}
	if strings.Count(out, "\n") != 1 {
		t.Errorf("want one line for $GITHUB_OUTPUT, got %q", out)
	}
	if len(m.Images.Include) != 1 {
		t.Fatalf("images %v, want the one patched client", m.Images.Include)
	}
	img := m.Images.Include[0]
	wantImage := map[string]any{"client": "prysm-segmented", "repo": "cskiraly/prysm", "branch": "segmented-payload-gossip",
		"commit": "5d0a9e6830b0c01933b0be57d441a5c03e004e0e", "image": "segdiff/prysm-beacon-chain:segmented-5d0a9e6",
		"artifact": "client-image-prysm-segmented"}
	if fmt.Sprint(img) != fmt.Sprint(wantImage) {
		t.Errorf("image job %v\n  want %v", img, wantImage)
	}
	shipped, _ := filepath.Glob(filepath.Join("..", "..", "network-params", "*.yaml"))
	byParams := map[string][]string{}
	for _, d := range m.Devnets.Include {
		byParams[d.Params] = d.Images
		wantImages := []string{}
		if d.Client == "prysm-segmented" {
			wantImages = []string{"segdiff/prysm-beacon-chain:segmented-5d0a9e6"}
		}
		if d.Images == nil || fmt.Sprint(d.Images) != fmt.Sprint(wantImages) {
			t.Errorf("devnet job %+v: images %v, want %v", d, d.Images, wantImages)
		}
		if !strings.HasPrefix(d.Tags, "@kurtosis && ~@slow && ~@broken") {
			t.Errorf("devnet job %+v: tags %q, want the @kurtosis scenarios", d, d.Tags)
		}
	}
	for _, f := range shipped {
		if _, ok := byParams["network-params/"+filepath.Base(f)]; !ok {
			t.Errorf("%s: no devnet job", f)
		}
	}
	if len(m.Devnets.Include) != len(shipped) || len(shipped) < 6 {
		t.Errorf("%d devnet jobs for %d shipped files", len(m.Devnets.Include), len(shipped))
	}
}

// TestPatchesFlags: a verb offers only its own flags, and refuses another
// verb's (or a misspelt one) in one line naming what it takes.
func TestPatchesFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"matrix has no --source", []string{"matrix", "--source", "x"},
			"segdiff patches matrix: matrix does not take --source (only apply, build, check use it); its flags: --manifest, --for-params (see 'segdiff patches matrix --help')"},
		{"matrix has no --client", []string{"matrix", "--client", "prysm-segmented"},
			"segdiff patches matrix: matrix does not take --client (only apply, build, check use it); its flags: --manifest, --for-params (see 'segdiff patches matrix --help')"},
		{"only build has --tag", []string{"apply", "--tag", "x/y:z"},
			"segdiff patches apply: apply does not take --tag (only build uses it); its flags: --manifest, --client, --source (see 'segdiff patches apply --help')"},
		{"a misspelt flag", []string{"check", "--sourec", "x"},
			"segdiff patches check: check does not take --sourec; its flags: --manifest, --client, --source; did you mean --source? (see 'segdiff patches check --help')"},
		{"a flag without its value", []string{"build", "--source"},
			"segdiff patches build: flag needs an argument: -source (see 'segdiff patches build --help')"},
		{"arguments", []string{"matrix", "extra"},
			`segdiff patches matrix: unexpected arguments ["extra"] (its flags: --manifest, --for-params) (see 'segdiff patches matrix --help')`},
		{"a misspelt verb", []string{"chek"},
			`segdiff patches: unknown subcommand "chek" (one of apply, build, check, claims, matrix); did you mean check? (see 'segdiff patches --help')`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runCLI(t, tt.args...)
			if code != 2 || errs != tt.want+"\n" || out != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q\n  want exit 2 and %q", code, out, errs, tt.want)
			}
		})
	}
	for verb, flags := range patchesVerbs {
		for _, f := range []string{"manifest", "client", "source", "tag"} {
			line := verb + " " + usageLine(t, verb)
			if got, want := strings.Contains(line, "--"+f), slices.Contains(flags, f); got != want {
				t.Errorf("usage %q offers --%s: %v, the verb takes it: %v", line, f, got, want)
			}
		}
	}
}

// usageLine returns the flags patchesUsage shows for verb.
func usageLine(t *testing.T, verb string) string {
	t.Helper()
	for _, l := range strings.Split(patchesUsage, "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == verb {
			return strings.Join(f[1:], " ")
		}
	}
	t.Fatalf("patchesUsage has no line for %s", verb)
	return ""
}

// TestPatchesSource: a missing or unusable --source is named as such
// before any patch is tried, in one line, for every verb that takes it.
func TestPatchesSource(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "nonexistent")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"apply, no such directory", []string{"apply", "--source", missing},
			"segdiff patches apply: --source " + missing + ": no such directory (want a checkout of the client)"},
		{"check, no such directory", []string{"check", "--source", missing},
			"segdiff patches check: --source " + missing + ": no such directory (want a checkout of the client)"},
		{"build, no such directory", []string{"build", "--source", missing},
			"segdiff patches build: --source " + missing + ": no such directory (want a checkout of the client)"},
		{"apply, a file", []string{"apply", "--source", file},
			"segdiff patches apply: --source " + file + ": not a directory (want a checkout of the client)"},
		{"apply without --source", []string{"apply"},
			"segdiff patches apply: --source DIR is required (a checkout of the client)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errs := runCLI(t, append(tt.args, "--manifest", repoManifest(t), "--client", "prysm-segmented")...)
			want := tt.want + " (see 'segdiff patches " + tt.args[0] + " --help')"
			if code != 2 || errs != want+"\n" {
				t.Fatalf("exit %d, stderr %q\n  want exit 2 and %q", code, errs, tt.want)
			}
		})
	}
	t.Run("unreadable", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root reads any directory")
		}
		dir := t.TempDir()
		if err := os.Chmod(dir, 0); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(dir, 0o755)
		code, _, errs := runCLI(t, "apply", "--source", dir, "--manifest", repoManifest(t))
		if code != 2 || !strings.Contains(errs, "--source "+dir+": cannot read the directory: permission denied") || strings.Count(errs, "\n") != 1 {
			t.Fatalf("exit %d: %q", code, errs)
		}
	})
}

// TestPatchesErrorsOneLine: manifest problems are one line each, each
// naming the manifest; a published image is refused by name.
func TestPatchesErrorsOneLine(t *testing.T) {
	manifest, _ := localReplaceRepo(t, "")
	data, _ := os.ReadFile(manifest)
	bad := strings.Replace(strings.Replace(string(data), "image: x/y:z", "image: x/y", 1), "layer: cl", "layer: vc", 1)
	if err := os.WriteFile(manifest, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI(t, "check", "--manifest", manifest)
	lines := strings.Split(strings.TrimSuffix(errs, "\n"), "\n")
	if code != 1 || len(lines) != 2 {
		t.Fatalf("exit %d, want 1 and two problems: %q", code, errs)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "segdiff patches check: invalid client manifest: "+manifest+":") {
			t.Errorf("line %q does not name the manifest", l)
		}
	}
	code, _, errs = runCLI(t, "build", "--manifest", repoManifest(t), "--client", "prysm-gloas", "--source", t.TempDir())
	if code != 2 || !strings.Contains(errs, "--client prysm-gloas: the entry names a published image") || strings.Count(errs, "\n") != 1 {
		t.Fatalf("exit %d: %q", code, errs)
	}
	code, _, errs = runCLI(t, "apply", "--manifest", repoManifest(t), "--client", "prysm-segmneted", "--source", t.TempDir())
	if code != 2 || !strings.Contains(errs, "--client prysm-segmneted: no such entry in "+repoManifest(t)+"; did you mean prysm-segmented?") || strings.Count(errs, "\n") != 1 {
		t.Fatalf("exit %d: %q", code, errs)
	}
}

const newFilePatch = `From 1111111111111111111111111111111111111111 Mon Sep 17 00:00:00 2001
From: segdiff <segdiff@example.com>
Subject: [PATCH] add x

---
diff --git a/x.go b/x.go
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/x.go
@@ -0,0 +1 @@
+package x
-- 
2.39.5
`

// localReplaceRepo writes a repository whose manifest builds one client
// with dockerfile ("" for the repository's Dockerfile) and its patch, and a
// client checkout whose go.mod replaces a module with ./third_party/dep.
func localReplaceRepo(t *testing.T, dockerfile string) (manifest, source string) {
	t.Helper()
	if dockerfile == "" {
		data, err := os.ReadFile(filepath.Join("..", "..", "client-patches", "prysm", "Dockerfile"))
		if err != nil {
			t.Fatal(err)
		}
		dockerfile = string(data)
	}
	root, source := t.TempDir(), t.TempDir()
	files := map[string]string{
		filepath.Join(root, "client-patches", "clients.yaml"): "version: 1\nclients:\n  - name: a\n    layer: cl\n    type: prysm\n    repo: o/r\n    branch: main\n" +
			"    commit: 0123456789abcdef0123456789abcdef01234567\n    patches: [p/0001-x.patch]\n    build: {dockerfile: Dockerfile}\n    image: x/y:z\n",
		filepath.Join(root, "client-patches", "Dockerfile"):        dockerfile,
		filepath.Join(root, "client-patches", "p", "0001-x.patch"): newFilePatch,
		filepath.Join(source, "go.mod"):                            "module example.com/client\n\ngo 1.26\n\nrequire example.com/dep v1.0.0\n\nreplace example.com/dep => ./third_party/dep\n",
		filepath.Join(source, "third_party", "dep", "go.mod"):      "module example.com/dep\n",
	}
	for p, body := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(root, "client-patches", "clients.yaml"), source
}

// dockerfileBeforeIssue20 is the repository's Dockerfile with the download
// step it had before issue #20: go.mod and go.sum alone in the stage.
func dockerfileBeforeIssue20(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "client-patches", "prysm", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(data, []byte("RUN --mount=type=bind,target=. \\\n"))
	j := bytes.Index(data, []byte("    go mod download\n"))
	if i < 0 || j < i {
		t.Fatal("the repository's Dockerfile no longer bind-mounts the checkout for go mod download; update this test")
	}
	return string(data[:i]) + "COPY go.mod go.sum ./\nRUN go mod download\n" + string(data[j+len("    go mod download\n"):])
}

// TestPatchesBuildContext: check --source and build --source fail, before
// Docker is asked, when the Dockerfile's download step cannot see a local
// replace target of the checkout's go.mod; the repository's Dockerfile passes.
func TestPatchesBuildContext(t *testing.T) {
	noDocker(t, "git") // check and build apply the patches with git
	manifest, source := localReplaceRepo(t, dockerfileBeforeIssue20(t))
	const want = `RUN go mod download cannot see the target of go.mod:7 "replace example.com/dep => ./third_party/dep" (/src/third_party/dep/go.mod is not in the stage at this step); before this step COPY third_party/dep /src/third_party/dep, or bind-mount the checkout into it: RUN --mount=type=bind,target=/src go mod download`
	for _, verb := range []string{"check", "build"} {
		code, _, errs := runCLI(t, verb, "--manifest", manifest, "--source", source)
		if code != 1 || !strings.Contains(errs, want) || strings.Count(errs, "\n") != 1 || strings.Contains(errs, "Docker is required") {
			t.Errorf("%s with the Dockerfile before issue 20: exit %d: %q\n  want exit 1 and one line with %q", verb, code, errs, want)
		}
	}
	manifest, source = localReplaceRepo(t, "")
	code, out, errs := runCLI(t, "check", "--manifest", manifest, "--source", source)
	if code != 0 || !strings.Contains(out, `a: Dockerfile: go.mod's local replace targets (replace example.com/dep => ./third_party/dep) are in the build context at every go step`) {
		t.Errorf("check with the repository's Dockerfile: exit %d: %s%s", code, out, errs)
	}
	code, _, errs = runCLI(t, "build", "--manifest", manifest, "--source", source)
	if code != 1 || !strings.Contains(errs, "Docker is required") {
		t.Errorf("build with the repository's Dockerfile: exit %d, want the context check passed and Docker asked for: %s", code, errs)
	}
}

// noDocker hides any docker command, leaving tools on PATH: PATH becomes a
// directory of links to those alone. Dropping the directories that hold
// docker instead dropped /usr/bin, git's, on Debian's docker.io.
func noDocker(t *testing.T, tools ...string) {
	t.Helper()
	dir := t.TempDir()
	for _, tool := range tools {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Fatalf("the test needs %s on PATH: %v", tool, err)
		}
		if err := os.Symlink(p, filepath.Join(dir, tool)); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir)
	if p, err := exec.LookPath("docker"); err == nil {
		t.Fatalf("docker still on PATH at %s", p)
	}
}

func TestPatchesUsage(t *testing.T) {
	if code, _, _ := runCLI(t); code != 2 {
		t.Fatalf("no subcommand: exit %d, want 2", code)
	}
	if code, _, errs := runCLI(t, "frobnicate", "--manifest", repoManifest(t)); code != 2 || !strings.Contains(errs, "unknown subcommand") || strings.Count(errs, "\n") != 1 {
		t.Fatalf("exit %d: %s", code, errs)
	}
}

func fmtSscan(s string, n *int) (int, error) { return fmt.Sscan(s, n) }
func itoa(n int) string                      { return strconv.Itoa(n) }
