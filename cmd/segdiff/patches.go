package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/segdiff/segdiff/clientpatch"
)

func init() {
	register("patches", command{"check, apply and build client patches; emit the nightly matrix", runPatches})
}

const patchesUsage = `usage: segdiff patches <check|apply|build|matrix> [flags]

  check  [--manifest F] [--client NAME] [--source DIR]
         validate the manifest and every patch (hunk counts); with --source
         (a checkout of the pinned commit) also check they apply, in order
  apply  --source DIR [--client NAME] [--manifest F]
         apply the client's patches in order (nothing is changed on a conflict)
  build  --source DIR [--client NAME] [--manifest F] [--tag IMAGE]
         docker build the patched checkout into the manifest's image
  matrix [--manifest F]
         print the nightly job matrix (JSON): one job per client and params file
`

func runPatches(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	subs := []string{"check", "apply", "build", "matrix"}
	switch {
	case len(args) == 0:
		return usageErrorf(stderr, "patches", "no subcommand given (one of %s)", strings.Join(subs, ", "))
	case isHelp(args[0]):
		fmt.Fprint(stderr, patchesUsage)
		return 0
	case !slices.Contains(subs, args[0]):
		return unknownSubcommand(stderr, "patches", args[0], subs)
	}
	sub, args := args[0], args[1:]
	fs := newFlagSet("patches " + sub)
	manifest := fs.String("manifest", clientpatch.DefaultPath, "client manifest")
	client := fs.String("client", "", "manifest entry (default: every buildable one for check; required with several)")
	source := fs.String("source", "", "checkout of the client's repository at the pinned commit (or branch head)")
	tag := fs.String("tag", "", "image tag to build (default: the manifest's image)")
	pos, exit, ok := parseCommand(stderr, "patches "+sub, patchesUsage+"\nflags:\n", fs, args)
	if !ok {
		return exit
	}
	if len(pos) > 0 {
		return usageErrorf(stderr, "patches "+sub, "unexpected arguments %q (patches %s takes flags only)", pos, sub)
	}
	m, err := clientpatch.LoadFile(*manifest)
	if err != nil {
		fmt.Fprintf(stderr, "segdiff patches: %v\n", err)
		return 1
	}
	var code int
	switch sub {
	case "check":
		code = patchesCheck(ctx, m, *client, *source, stdout, stderr)
	case "apply":
		code = patchesApply(ctx, m, *client, *source, stdout, stderr)
	case "build":
		code = patchesBuild(ctx, m, *client, *source, *tag, stdout, stderr)
	case "matrix":
		code = patchesMatrix(m, stdout, stderr)
	}
	return code
}

// selectClients returns the named entry, or every buildable entry when name
// is empty and all is true, or the only buildable one.
func selectClients(m *clientpatch.Manifest, name string, all bool) ([]*clientpatch.Client, error) {
	if name != "" {
		c, ok := m.Lookup(name)
		if !ok {
			return nil, fmt.Errorf("no client %q in %s", name, m.Path)
		}
		return []*clientpatch.Client{c}, nil
	}
	var out []*clientpatch.Client
	for i := range m.Clients {
		if m.Clients[i].Buildable() {
			out = append(out, &m.Clients[i])
		}
	}
	if !all && len(out) != 1 {
		return nil, fmt.Errorf("%s has %d buildable clients: name one with --client", m.Path, len(out))
	}
	return out, nil
}

func patchesCheck(ctx context.Context, m *clientpatch.Manifest, name, source string, stdout, stderr io.Writer) int {
	clients, err := selectClients(m, name, source == "")
	if err != nil {
		fmt.Fprintf(stderr, "segdiff patches check: %v\n", err)
		return 2
	}
	failed := false
	for _, c := range clients {
		hunks := 0
		for _, p := range m.PatchPaths(c) {
			pp, err := clientpatch.ParsePatchFile(p)
			if err != nil {
				fmt.Fprintf(stderr, "FAIL %v\n", err)
				failed = true
				continue
			}
			for _, f := range pp.Files {
				hunks += len(f.Hunks)
			}
		}
		fmt.Fprintf(stdout, "%s: %d patches, %d hunks well-formed (%s@%.12s)\n", c.Name, len(c.Patches), hunks, c.Repo, c.Commit)
		if source == "" || failed {
			continue
		}
		if head := gitHead(ctx, source); head != "" && head != c.Commit {
			fmt.Fprintf(stdout, "%s: note: %s is at %.12s, the manifest pins %.12s\n", c.Name, source, head, c.Commit)
		}
		if err := clientpatch.CheckApply(ctx, source, m.PatchPaths(c)); err != nil {
			fmt.Fprintf(stderr, "FAIL %s: %v\n", c.Name, err)
			failed = true
			continue
		}
		fmt.Fprintf(stdout, "%s: all patches apply to %s\n", c.Name, source)
	}
	if failed {
		return 1
	}
	return 0
}

func patchesApply(ctx context.Context, m *clientpatch.Manifest, name, source string, stdout, stderr io.Writer) int {
	if source == "" {
		fmt.Fprintln(stderr, "segdiff patches apply: --source DIR is required")
		return 2
	}
	clients, err := selectClients(m, name, false)
	if err != nil {
		fmt.Fprintf(stderr, "segdiff patches apply: %v\n", err)
		return 2
	}
	c := clients[0]
	if err := clientpatch.Apply(ctx, source, m.PatchPaths(c)); err != nil {
		fmt.Fprintf(stderr, "segdiff patches apply: %s: %v\n", c.Name, err)
		return 1
	}
	fmt.Fprintf(stdout, "%s: applied %d patches to %s\n", c.Name, len(c.Patches), source)
	return 0
}

func patchesBuild(ctx context.Context, m *clientpatch.Manifest, name, source, tag string, stdout, stderr io.Writer) int {
	if source == "" {
		fmt.Fprintln(stderr, "segdiff patches build: --source DIR is required")
		return 2
	}
	clients, err := selectClients(m, name, false)
	if err != nil {
		fmt.Fprintf(stderr, "segdiff patches build: %v\n", err)
		return 2
	}
	c := clients[0]
	if c.Build == nil {
		fmt.Fprintf(stderr, "segdiff patches build: %s has no build recipe\n", c.Name)
		return 2
	}
	if err := dockerAvailable(ctx); err != nil {
		fmt.Fprintf(stderr, "segdiff patches build: Docker is required: %v\n", err)
		return 1
	}
	if tag == "" {
		tag = c.Image
	}
	dockerfile, err := filepath.Abs(filepath.Join(m.Dir(), filepath.FromSlash(c.Build.Dockerfile)))
	if err != nil {
		fmt.Fprintf(stderr, "segdiff patches build: %v\n", err)
		return 1
	}
	args := dockerBuildArgs(c, dockerfile, tag, source)
	fmt.Fprintf(stdout, "docker %v\n", args)
	cmd := exec.CommandContext(ctx, "docker", args...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintf(stderr, "segdiff patches build: %s: docker build: %v\n", c.Name, err)
		return 1
	}
	fmt.Fprintf(stdout, "%s: built %s\n", c.Name, tag)
	return 0
}

// gitHead returns the commit dir is checked out at, "" when dir is not the
// top of a git checkout.
func gitHead(ctx context.Context, dir string) string {
	top, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return ""
	}
	abs, err := filepath.Abs(dir)
	if err != nil || strings.TrimSpace(string(top)) != abs {
		return ""
	}
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// dockerBuildArgs is the docker command line for c's recipe, build args in
// sorted order so the command is reproducible.
func dockerBuildArgs(c *clientpatch.Client, dockerfile, tag, source string) []string {
	args := []string{"build", "-f", dockerfile, "-t", tag}
	if c.Build.Target != "" {
		args = append(args, "--target", c.Build.Target)
	}
	keys := make([]string, 0, len(c.Build.Args))
	for k := range c.Build.Args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "--build-arg", k+"="+c.Build.Args[k])
	}
	return append(args, source)
}

// dockerAvailable asks the engine, not just the CLI, whether Docker works.
func dockerAvailable(ctx context.Context) error {
	if _, err := exec.LookPath("docker"); err != nil {
		return errors.New("no docker command on PATH")
	}
	out, err := exec.CommandContext(ctx, "docker", "info", "--format", "{{.ServerVersion}}").CombinedOutput()
	if err != nil {
		return fmt.Errorf("docker info: %v: %s", err, firstLine(out))
	}
	return nil
}

func firstLine(b []byte) string {
	for i, c := range b {
		if c == '\n' {
			return string(b[:i])
		}
	}
	return string(b)
}

// matrixEntry is one nightly job: a client with one of its network-params
// files. Build is false for a published image (no checkout, patch or build).
type matrixEntry struct {
	Client string `json:"client"`
	Build  bool   `json:"build"`
	Repo   string `json:"repo"`
	Branch string `json:"branch"`
	Commit string `json:"commit"`
	Image  string `json:"image"`
	Params string `json:"params"`
}

func patchesMatrix(m *clientpatch.Manifest, stdout, stderr io.Writer) int {
	include := []matrixEntry{}
	for _, c := range m.Clients {
		for _, p := range c.Params {
			include = append(include, matrixEntry{c.Name, c.Buildable(), c.Repo, c.Branch, c.Commit, c.Image, p})
		}
	}
	if len(include) == 0 {
		fmt.Fprintf(stderr, "segdiff patches matrix: no client in %s lists params\n", m.Path)
		return 1
	}
	if err := json.NewEncoder(stdout).Encode(map[string]any{"include": include}); err != nil {
		fmt.Fprintf(stderr, "segdiff patches matrix: %v\n", err)
		return 1
	}
	return 0
}
