package clientpatch_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/segdiff/segdiff/internal/repo"

	"github.com/segdiff/segdiff/internal/clientpatch"
)

func TestImageFiles(t *testing.T) {
	tests := []struct {
		name, dockerfile string
		want             []string
		wantErr          string
	}{
		{name: "copy to a file", dockerfile: "FROM x\nCOPY a /bin/a\n", want: []string{"/bin/a"}},
		{name: "copy into a directory", dockerfile: "FROM x\nCOPY a b /opt/\n", want: []string{"/opt/a", "/opt/b"}},
		{name: "relative to workdir", dockerfile: "FROM x\nWORKDIR /app\nCOPY a bin/a\nWORKDIR sub\nADD c .\n", want: []string{"/app/bin/a", "/app/sub/c"}},
		{name: "json form and flags", dockerfile: "FROM x\nCOPY --chown=1:1 --from=b [\"/o/a\", \"/a\"]\n", want: []string{"/a"}},
		{name: "only the final stage", dockerfile: "FROM x AS build\nCOPY a /build-only\nFROM y\nCOPY --from=build /build-only /final\n", want: []string{"/final"}},
		{name: "a stage built from another inherits its files", dockerfile: "FROM x AS base\nCOPY a /a\nFROM base\nCOPY b /b\n", want: []string{"/a", "/b"}},
		{name: "symlinks in RUN", dockerfile: "FROM x\nRUN mkdir -p /d && ln -sf /a /d/a; ln -s /b /bin/ && ln /hard /link\n", want: []string{"/bin/b", "/d/a"}},
		{name: "continuations and comments", dockerfile: "# c\nFROM x\nCOPY a \\\n  # inner comment\n  /a\n", want: []string{"/a"}},
		{name: "the prysm image before issue 15: only the Bazel path", dockerfile: "FROM golang AS build\nRUN go build -o /out/beacon-chain ./cmd/beacon-chain\nFROM debian\nCOPY --from=build /out/beacon-chain /app/cmd/beacon-chain/beacon-chain\nENTRYPOINT [\"/app/cmd/beacon-chain/beacon-chain\"]\n",
			want: []string{"/app/cmd/beacon-chain/beacon-chain"}},
		{name: "no FROM", dockerfile: "COPY a /a\n", wantErr: "no FROM"},
		{name: "COPY without destination", dockerfile: "FROM x\nCOPY a\n", wantErr: "line 2: COPY/ADD needs a source and a destination"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := clientpatch.ImageFiles([]byte(tt.dockerfile))
			if errorCase(t, err, tt.wantErr) {
				return
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestRepositoryDockerfilesProvideLauncherBinaries: every buildable entry's
// image has the path ethereum-package's launcher executes (/beacon-chain for
// Prysm), and the same Dockerfile without its COPY to that path fails to
// load.
func TestRepositoryDockerfilesProvideLauncherBinaries(t *testing.T) {
	m, err := clientpatch.LoadFile(repo.Path(t, clientpatch.DefaultPath))
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, c := range m.Clients {
		want := clientpatch.LauncherBinary(c.Layer, c.Type)
		if !c.Buildable() || want == "" {
			continue
		}
		checked++
		path := filepath.Join(m.Dir(), filepath.FromSlash(c.Build.Dockerfile))
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		files, err := clientpatch.ImageFiles(data)
		if err != nil || !slices.Contains(files, want) {
			t.Errorf("%s: image files %v (err %v), want %s", path, files, err, want)
		}
		// Without the COPY the manifest must not load.
		var kept []string
		for _, line := range strings.Split(string(data), "\n") {
			if !strings.HasPrefix(line, "COPY") || !strings.HasSuffix(strings.TrimSpace(line), " "+want) {
				kept = append(kept, line)
			}
		}
		dir := t.TempDir()
		manifest := strings.ReplaceAll(
			"version: 1\nclients:\n  - {name: a, layer: LAYER, type: TYPE, repo: o/r, branch: main, commit: 0123456789abcdef0123456789abcdef01234567, patches: [p/0001-a.patch], build: {dockerfile: Dockerfile}, image: x/y:z}\n",
			"LAYER", c.Layer)
		manifest = strings.ReplaceAll(manifest, "TYPE", c.Type)
		for name, body := range map[string]string{"clients.yaml": manifest, "Dockerfile": strings.Join(kept, "\n"), "p/0001-a.patch": "x"} {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, err = clientpatch.LoadFile(filepath.Join(dir, "clients.yaml"))
		if err == nil || !strings.Contains(err.Error(), "puts no "+want+" in the image") {
			t.Errorf("%s without its COPY to %s: LoadFile err = %v, want the launcher-binary error", path, want, err)
		}
	}
	if checked == 0 {
		t.Fatal("no buildable entry with a launcher binary to check (prysm-segmented expected)")
	}
}

// FuzzImageFiles: any Dockerfile yields paths or an error, never a panic,
// and every path found is absolute or names a variable.
func FuzzImageFiles(f *testing.F) {
	f.Add([]byte("FROM x AS b\nWORKDIR /w\nCOPY [\"a\", \"b\", \"/c/\"]\nRUN ln -s /a /b && true\nFROM b\n"))
	f.Add([]byte("FROM\nCOPY\n\\"))
	f.Fuzz(func(t *testing.T, data []byte) {
		files, err := clientpatch.ImageFiles(data)
		if err != nil {
			return
		}
		for _, p := range files {
			if !strings.HasPrefix(p, "/") && !strings.Contains(p, "$") {
				t.Fatalf("relative path %q from %q", p, data)
			}
		}
	})
}

// errorCase fails t unless err matches want (a substring; "" wants no
// error) and reports whether the case ends there (an error was wanted).
func errorCase(t *testing.T, err error, want string) bool {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatal(err)
		}
		return false
	}
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want %q", err, want)
	}
	return true
}
