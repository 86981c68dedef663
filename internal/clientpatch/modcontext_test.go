package clientpatch_test

import (
	"os"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/segdiff/segdiff/internal/repo"

	"github.com/segdiff/segdiff/internal/clientpatch"
)

// prysmGoMod has the two kinds of replace of Prysm's go.mod (branch
// segmented-payload-gossip): a module replaced by another module, and one
// replaced by a directory of the checkout (line 9).
const prysmGoMod = `module github.com/OffchainLabs/prysm/v7

go 1.26.5

require github.com/tyler-smith/go-bip39 v1.1.0

replace github.com/json-iterator/go => github.com/prestonvanloon/go v1.1.7-0.20190722034630-4f2e55fcf87b

replace github.com/tyler-smith/go-bip39 => ./third_party/go-bip39
`

// dockerfileBeforeIssue20 is client-patches/prysm/Dockerfile's build stage
// before issue #20: only go.mod and go.sum are in the stage at the
// download.
const dockerfileBeforeIssue20 = `ARG GO_VERSION=1.26
FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=1 go build -trimpath -o /out/beacon-chain ./cmd/beacon-chain
FROM debian:bookworm-slim
COPY --from=build /out/beacon-chain /beacon-chain
`

func prysmCheckout(goMod string) fstest.MapFS {
	return fstest.MapFS{
		"go.mod":                          {Data: []byte(goMod)},
		"go.sum":                          {Data: []byte("\n")},
		"cmd/beacon-chain/main.go":        {Data: []byte("package main\n")},
		"third_party/go-bip39/go.mod":     {Data: []byte("module github.com/tyler-smith/go-bip39\n")},
		"third_party/go-bip39/bip39.go":   {Data: []byte("package bip39\n")},
		"third_party/testdata/vectors.go": {Data: []byte("package testdata\n")},
	}
}

func TestCheckGoModuleContext(t *testing.T) {
	repoDockerfile, err := os.ReadFile(repo.Path(t, "client-patches", "prysm", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	const replace = `"replace github.com/tyler-smith/go-bip39 => ./third_party/go-bip39"`
	tests := []struct {
		name, dockerfile string
		checkout         fstest.MapFS // nil: prysmCheckout(prysmGoMod)
		ignore           []string
		wantSteps        int
		wantErr          []string
	}{
		{name: "the Dockerfile before issue 20 fails at the download", dockerfile: dockerfileBeforeIssue20, wantErr: []string{
			"Dockerfile:5: RUN go mod download cannot see the target of go.mod:9 " + replace,
			"(/src/third_party/go-bip39/go.mod is not in the stage at this step)",
			"before this step COPY third_party/go-bip39 /src/third_party/go-bip39, or bind-mount the checkout into it: RUN --mount=type=bind,target=/src go mod download"}},
		{name: "the repository's Dockerfile bind-mounts the checkout", dockerfile: string(repoDockerfile), wantSteps: 2},
		{name: "the target COPYed before the download", dockerfile: "FROM golang\nWORKDIR /src\nCOPY go.mod go.sum ./\nCOPY third_party/go-bip39 third_party/go-bip39\nRUN go mod download\n", wantSteps: 1},
		{name: "the target's go.mod is enough for the download", dockerfile: "FROM golang\nWORKDIR /src\nCOPY [\"go.mod\", \"go.sum\", \"./\"]\nCOPY third_party/go-bip39/go.mod third_party/go-bip39/\nRUN go mod download\n", wantSteps: 1},
		{name: "a stage built from a stage has its files and WORKDIR", dockerfile: "FROM golang AS base\nWORKDIR /src\nCOPY . .\nFROM base\nRUN go mod download\n", wantSteps: 1},
		{name: "cd in the RUN command", dockerfile: "FROM golang\nCOPY . /src/\nRUN set -e; cd /src && go mod download\n", wantSteps: 1},
		{name: "go -C", dockerfile: "FROM golang\nCOPY . /src\nRUN go -C /src build ./cmd/beacon-chain\n", wantSteps: 1},
		{name: "go install pkg@version does not load the module", dockerfile: "FROM golang\nWORKDIR /src\nCOPY go.mod ./\nRUN go install example.com/tool@v1.0.0\nCOPY . .\nRUN go build ./...\n", wantSteps: 1},
		{name: "the target's own module is not checked", dockerfile: "FROM golang\nCOPY third_party/go-bip39 /bip39\nRUN cd /bip39 && go build ./...\nCOPY . /src\nRUN cd /src && go vet ./...\n", wantSteps: 1},
		{name: "bind mounts of go.mod and go.sum only", dockerfile: "FROM golang\nWORKDIR /src\nRUN --mount=type=cache,target=/go/pkg/mod --mount=type=bind,source=go.sum,target=go.sum \\\n  --mount=type=bind,source=go.mod,target=go.mod go mod download\n",
			wantErr: []string{"Dockerfile:3: RUN go mod download cannot see the target of go.mod:9", "/src/third_party/go-bip39/go.mod is not in the stage"}},
		{name: "a bind mount from another stage is not the checkout", dockerfile: "FROM golang AS deps\nFROM golang\nWORKDIR /src\nCOPY go.mod go.sum ./\nRUN --mount=type=bind,from=deps,target=. go mod download\n",
			wantErr: []string{"Dockerfile:5: RUN go mod download cannot see"}},
		{name: "JSON-form RUN, wildcard COPY", dockerfile: "FROM golang\nWORKDIR /src\nCOPY go.* ./\nRUN [\"go\", \"mod\", \"download\"]\n",
			wantErr: []string{"Dockerfile:4: RUN go mod download cannot see"}},
		{name: "the target excluded by .dockerignore", dockerfile: "FROM golang\nWORKDIR /src\nCOPY . .\nRUN go mod download\n", ignore: []string{"bazel-*", "third_party"},
			wantErr: []string{"(third_party/go-bip39/go.mod is excluded from the build context by .dockerignore); stop .dockerignore excluding third_party/go-bip39"}},
		{name: "a .dockerignore that spares the target", dockerfile: "FROM golang\nWORKDIR /src\nCOPY . .\nRUN go mod download\n", ignore: []string{"third_party/testdata/"}, wantSteps: 1},
		{name: "the target missing from the checkout", dockerfile: "FROM golang\nWORKDIR /src\nCOPY . .\nRUN go mod download\n",
			checkout: fstest.MapFS{"go.mod": {Data: []byte(prysmGoMod)}},
			wantErr:  []string{"(the checkout has no third_party/go-bip39/go.mod); check out third_party/go-bip39 or correct the replace directive"}},
		{name: "a target outside the checkout", dockerfile: "FROM golang\nCOPY . .\nRUN go mod download\n",
			checkout: fstest.MapFS{"go.mod": {Data: []byte(strings.Replace(prysmGoMod, "./third_party/go-bip39", "../go-bip39", 1))}},
			wantErr:  []string{"go.mod:9: replace github.com/tyler-smith/go-bip39 => ../go-bip39: the target is outside the checkout"}},
		{name: "no go step on the module", dockerfile: "FROM golang\nCOPY . /src\nRUN make -C /src beacon-chain\n",
			wantErr: []string{"Dockerfile: no RUN step runs go on the checkout's module", "(replace github.com/tyler-smith/go-bip39 => ./third_party/go-bip39)"}},
		{name: "no FROM", dockerfile: "RUN go mod download\n", wantErr: []string{"Dockerfile: no FROM instruction"}},
		{name: "a bad go.mod", dockerfile: "FROM golang\n", checkout: fstest.MapFS{"go.mod": {Data: []byte("module x\nreplace (\n")}},
			wantErr: []string{"parse go.mod: "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkout := tt.checkout
			if checkout == nil {
				checkout = prysmCheckout(prysmGoMod)
			}
			got, err := clientpatch.CheckGoModuleContext("Dockerfile", []byte(tt.dockerfile), checkout, tt.ignore)
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("no error, checked %+v", got)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error is not one line: %q", err)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q\n  does not contain %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Replaces, []string{"replace github.com/tyler-smith/go-bip39 => ./third_party/go-bip39"}) || len(got.Steps) != tt.wantSteps {
				t.Fatalf("checked %+v, want the local replace at %d go steps", got, tt.wantSteps)
			}
		})
	}
}

// TestCheckGoModuleContext_NothingToCheck: a checkout without a go.mod, or
// whose go.mod replaces nothing with a directory, passes any Dockerfile and
// says it checked nothing.
func TestCheckGoModuleContext_NothingToCheck(t *testing.T) {
	for name, checkout := range map[string]fstest.MapFS{
		"no go.mod":         {"Cargo.toml": {Data: []byte("[package]\n")}},
		"no local replaces": {"go.mod": {Data: []byte(strings.Replace(prysmGoMod, "replace github.com/tyler-smith/go-bip39 => ./third_party/go-bip39\n", "", 1))}},
	} {
		got, err := clientpatch.CheckGoModuleContext("Dockerfile", []byte(dockerfileBeforeIssue20), checkout, nil)
		if err != nil || len(got.Replaces) != 0 || len(got.Steps) != 0 {
			t.Errorf("%s: got %+v, %v; want nothing checked", name, got, err)
		}
	}
}

// FuzzCheckGoModuleContext: any Dockerfile is checked or refused, never a
// panic, and a pass names the go steps it checked.
func FuzzCheckGoModuleContext(f *testing.F) {
	f.Add([]byte(dockerfileBeforeIssue20))
	f.Add([]byte("FROM a AS b\nWORKDIR /s\nRUN --mount=type=bind,target=. --mount=src=x go -C . mod download && cd .. ; go build\nFROM b\nCOPY [\"*\", \"./\"]\nRUN [\"go\", \"vet\"]\n"))
	checkout := prysmCheckout(prysmGoMod)
	f.Fuzz(func(t *testing.T, dockerfile []byte) {
		got, err := clientpatch.CheckGoModuleContext("Dockerfile", dockerfile, checkout, []string{"bazel-*"})
		if err == nil && len(got.Steps) == 0 {
			t.Fatalf("passed without checking a go step: %q", dockerfile)
		}
	})
}
