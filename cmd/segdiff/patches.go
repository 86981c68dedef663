package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/segdiff/segdiff/internal/clientpatch"
	"github.com/segdiff/segdiff/internal/devnet/kurtosis"
	"github.com/segdiff/segdiff/internal/scrape"
	"github.com/segdiff/segdiff/internal/suggest"
)

func init() {
	register("patches", command{summary: "check, apply and build client patches; emit the nightly matrix", run: runPatches})
}

const patchesUsage = `usage: segdiff patches <check|apply|build|claims|matrix> [flags]

  check  [--manifest F] [--client NAME] [--source DIR]
         validate the manifest, every patch (hunk counts) and the nightly plan
         (every network-params file in a job); with --source (a checkout of the
         pinned commit) also check the patches apply, in order, and that the
         Dockerfile's go steps see go.mod's local replace targets
  apply  --source DIR [--client NAME] [--manifest F]
         apply the client's patches in order (nothing is changed on a conflict)
  build  --source DIR [--client NAME] [--manifest F] [--tag IMAGE]
         check the build context as check --source does, then docker build
         the patched checkout into the manifest's image
  claims [--manifest F] [--endpoints F]
         scrape every node of a running Kurtosis devnet (its endpoints file,
         default .devnet/segdiff/endpoints.json) and compare the sources its
         manifest entry claims (contract, topic-bytes) with what the node
         exports; any disagreement exits 1 naming the node and source
  matrix [--manifest F] [--for-params PARAMS]
         print the nightly plan (JSON): {"images": {"include": [one job per
         image to build]}, "devnets": {"include": [one job per client and
         params file, with the built images it loads]}}; with --for-params, only
         the tag filter of that params file's devnet job (one line)
`

// patchesOptions are the flags of every verb; each verb defines only those
// patchesVerbs lists for it.
type patchesOptions struct{ manifest, client, source, tag, endpoints, forParams string }

// patchesVerbs lists each verb's flags, in usage order.
var patchesVerbs = map[string][]string{
	"check":  {"manifest", "client", "source"},
	"apply":  {"manifest", "client", "source"},
	"build":  {"manifest", "client", "source", "tag"},
	"claims": {"manifest", "endpoints"},
	"matrix": {"manifest", "for-params"},
}

var patchesFlagDefs = map[string]func(*flag.FlagSet, *patchesOptions){
	"manifest": func(fs *flag.FlagSet, o *patchesOptions) {
		fs.StringVar(&o.manifest, "manifest", clientpatch.DefaultPath, "client manifest")
	},
	"client": func(fs *flag.FlagSet, o *patchesOptions) {
		fs.StringVar(&o.client, "client", "", "manifest entry (default: every buildable one for check; required with several)")
	},
	"source": func(fs *flag.FlagSet, o *patchesOptions) {
		fs.StringVar(&o.source, "source", "", "checkout of the client's repository at the pinned commit (or branch head)")
	},
	"endpoints": func(fs *flag.FlagSet, o *patchesOptions) {
		fs.StringVar(&o.endpoints, "endpoints", kurtosis.EndpointsPath(kurtosis.DefaultEndpointsDir, kurtosis.DefaultEnclave), "the running devnet's endpoints file (segdiff devnet up writes it)")
	},
	"for-params": func(fs *flag.FlagSet, o *patchesOptions) {
		fs.StringVar(&o.forParams, "for-params", "", "print only the tag filter of this network-params file's devnet job")
	},
	"tag": func(fs *flag.FlagSet, o *patchesOptions) {
		fs.StringVar(&o.tag, "tag", "", "image tag to build (default: the manifest's image)")
	},
}

func runPatches(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	verbs := slices.Sorted(maps.Keys(patchesVerbs))
	switch {
	case len(args) == 0:
		return usageErrorf(stderr, "patches", "no subcommand given (one of check, apply, build, claims, matrix)")
	case isHelp(args[0]):
		fmt.Fprint(stderr, patchesUsage)
		return 0
	}
	sub, args := args[0], args[1:]
	names, ok := patchesVerbs[sub]
	if !ok {
		return unknownSubcommand(stderr, "patches", sub, verbs)
	}
	var o patchesOptions
	fs := newFlagSet("patches " + sub)
	for _, n := range names {
		patchesFlagDefs[n](fs, &o)
	}
	pos, err := parseArgs(fs, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		printHelp(stderr, patchesUsage+"\nflags of "+sub+":\n", fs)
		return 0
	case err != nil:
		return usageError(stderr, "patches "+sub, patchesFlagError(sub, err))
	case len(pos) > 0:
		return usageErrorf(stderr, "patches "+sub, "unexpected arguments %q (its flags: %s)", pos, flagList(names))
	case o.source == "" && (sub == "apply" || sub == "build"):
		return usageErrorf(stderr, "patches "+sub, "--source DIR is required (a checkout of the client)")
	case o.source != "":
		if err := checkSource(o.source); err != nil {
			return usageError(stderr, "patches "+sub, err)
		}
	}
	m, err := clientpatch.LoadFile(o.manifest)
	if err != nil {
		printErrLines(stderr, "segdiff patches "+sub+": ", err)
		return 1
	}
	switch sub {
	case "check":
		return patchesCheck(ctx, m, o.client, o.source, stdout, stderr)
	case "apply":
		return patchesApply(ctx, m, o.client, o.source, stdout, stderr)
	case "build":
		return patchesBuild(ctx, m, o.client, o.source, o.tag, stdout, stderr)
	case "claims":
		return patchesClaims(ctx, m, o.endpoints, stdout, stderr)
	default:
		return patchesMatrix(m, o.forParams, stdout, stderr)
	}
}

// patchesFlagError rewrites an undefined-flag error for verb, naming the
// verb's flags and, for a flag of another verb, that verb.
func patchesFlagError(verb string, err error) error {
	msg, undefined := strings.CutPrefix(err.Error(), "flag provided but not defined: ")
	if !undefined {
		return err
	}
	name, _, _ := strings.Cut(strings.TrimLeft(msg, "-"), ";") // parseArgs may have added a suggestion
	var users []string
	for _, v := range slices.Sorted(maps.Keys(patchesVerbs)) {
		if slices.Contains(patchesVerbs[v], name) {
			users = append(users, v)
		}
	}
	switch len(users) {
	case 0:
		return fmt.Errorf("%s does not take --%s; its flags: %s%s", verb, name, flagList(patchesVerbs[verb]), suggest.DidYouMean(name, patchesVerbs[verb], "--"))
	case 1:
		return fmt.Errorf("%s does not take --%s (only %s uses it); its flags: %s", verb, name, users[0], flagList(patchesVerbs[verb]))
	}
	return fmt.Errorf("%s does not take --%s (only %s use it); its flags: %s", verb, name, strings.Join(users, ", "), flagList(patchesVerbs[verb]))
}

func flagList(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "--" + n
	}
	return strings.Join(out, ", ")
}

// checkSource fails, naming --source, unless dir is a readable directory.
func checkSource(dir string) error {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, iofs.ErrNotExist):
		return fmt.Errorf("--source %s: no such directory (want a checkout of the client)", dir)
	case err != nil:
		return fmt.Errorf("--source %s: %w", dir, pathErr(err))
	case !st.IsDir():
		return fmt.Errorf("--source %s: not a directory (want a checkout of the client)", dir)
	}
	f, err := os.Open(dir)
	if err == nil {
		_, err = f.Readdirnames(1)
		f.Close()
		if errors.Is(err, io.EOF) {
			err = nil
		}
	}
	if err != nil {
		return fmt.Errorf("--source %s: cannot read the directory: %w", dir, pathErr(err))
	}
	return nil
}

// pathErr drops the path an *fs.PathError repeats.
func pathErr(err error) error {
	var pe *iofs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// printErrLines prints each line of err (joined errors are one per line)
// with prefix.
func printErrLines(w io.Writer, prefix string, err error) {
	for _, l := range strings.Split(err.Error(), "\n") {
		if strings.TrimSpace(l) != "" {
			fmt.Fprintf(w, "%s%s\n", prefix, l)
		}
	}
}

// selectClients returns the named entry, or every buildable entry when name
// is empty and all is true, or the only buildable one. A named entry must
// be buildable: every verb works on a checkout's patches.
func selectClients(m *clientpatch.Manifest, name string, all bool) ([]*clientpatch.Client, error) {
	if name != "" {
		c, ok := m.Lookup(name)
		if !ok {
			return nil, fmt.Errorf("--client %s: no such entry in %s%s (entries: %s)", name, m.Path, suggest.DidYouMean(name, m.Names(), ""), strings.Join(m.Names(), ", "))
		}
		if !c.Buildable() {
			return nil, fmt.Errorf("--client %s: the entry names a published image (%s, no repo in %s), so it has no patches and nothing to build", name, c.Image, m.Path)
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
		if !reportBuildContext(m, c, source, stdout, stderr, "FAIL ") {
			failed = true
		}
	}
	n, err := m.Nightly()
	if err != nil {
		printErrLines(stderr, "FAIL ", err)
		failed = true
	} else {
		built := make([]string, len(n.Images))
		for i, img := range n.Images {
			built[i] = img.Client
		}
		fmt.Fprintf(stdout, "nightly: %d devnet jobs over the %d %s/*.yaml files (%d exempt); images built once each: %s\n",
			len(n.Devnets), n.Shipped, clientpatch.ParamsDir, len(m.NightlyExempt), strings.Join(built, ", "))
	}
	if failed {
		return 1
	}
	return 0
}

// reportBuildContext runs the Dockerfile's build-context check for c on
// source and reports what it checked; false when it failed.
func reportBuildContext(m *clientpatch.Manifest, c *clientpatch.Client, source string, stdout, stderr io.Writer, failPrefix string) bool {
	mc, err := m.CheckBuildContext(c, source)
	if err != nil {
		printErrLines(stderr, failPrefix+c.Name+": ", err)
		return false
	}
	if len(mc.Replaces) == 0 {
		fmt.Fprintf(stdout, "%s: %s has no go.mod with a local replace directive: no build-context check\n", c.Name, source)
		return true
	}
	lines := make([]string, len(mc.Steps))
	for i, l := range mc.Steps {
		lines[i] = strconv.Itoa(l)
	}
	fmt.Fprintf(stdout, "%s: %s: go.mod's local replace targets (%s) are in the build context at every go step (lines %s)\n",
		c.Name, c.Build.Dockerfile, strings.Join(mc.Replaces, ", "), strings.Join(lines, ", "))
	return true
}

func patchesApply(ctx context.Context, m *clientpatch.Manifest, name, source string, stdout, stderr io.Writer) int {
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
	clients, err := selectClients(m, name, false)
	if err != nil {
		fmt.Fprintf(stderr, "segdiff patches build: %v\n", err)
		return 2
	}
	c := clients[0]
	if !reportBuildContext(m, c, source, stdout, stderr, "segdiff patches build: ") {
		return 1
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

// nightlyMatrix is `segdiff patches matrix`'s output: two GitHub Actions
// matrices, the image jobs and the devnet jobs (.github/workflows/nightly.yml).
type nightlyMatrix struct {
	Images  matrixOf[clientpatch.ImageJob]  `json:"images"`
	Devnets matrixOf[clientpatch.DevnetJob] `json:"devnets"`
}

type matrixOf[T any] struct {
	Include []T `json:"include"`
}

// patchesClaims scrapes every node of the devnet in endpointsFile and prints,
// per node and source, what the manifest claims and what the node exports.
func patchesClaims(ctx context.Context, m *clientpatch.Manifest, endpointsFile string, stdout, stderr io.Writer) int {
	e, err := kurtosis.ReadEndpoints(endpointsFile)
	if err != nil {
		fmt.Fprintf(stderr, "segdiff patches claims: %v\n", err)
		return 1
	}
	if e.ParamsFile == "" {
		fmt.Fprintf(stderr, "segdiff patches claims: %s names no params file: start the devnet with segdiff devnet up --params\n", endpointsFile)
		return 1
	}
	src, err := scrape.NewDirect()
	if err != nil {
		fmt.Fprintf(stderr, "segdiff patches claims: %v\n", err)
		return 1
	}
	var seen []clientpatch.Observed
	for _, n := range e.DevnetNodes() {
		snap, err := src.Snapshot(ctx, n)
		if err != nil {
			fmt.Fprintf(stderr, "segdiff patches claims: scrape node %s: %v\n", n.ID, err)
			return 1
		}
		seen = append(seen, clientpatch.Observed{Node: n.ID, Type: n.Client, Contract: snap.Info.Present, TopicBytes: snap.HasTopicBytes})
	}
	claims, err := m.CheckClaims(e.ParamsFile, seen)
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "node\tentry\tsource\tclaimed\texported\t")
	bad := 0
	for _, c := range claims {
		verdict := "ok"
		if !c.Holds() {
			verdict, bad = "MISMATCH", bad+1
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%v\t%v\t%s\n", c.Node, c.Entry, c.Source, c.Claimed, c.Found, verdict)
	}
	_ = w.Flush()
	if err != nil {
		printErrLines(stderr, "segdiff patches claims: ", err)
		return 1
	}
	for _, c := range claims {
		if !c.Holds() {
			what := "claims %s, which its node %s does not export"
			if !c.Claimed {
				what = "does not claim %s, which its node %s exports"
			}
			fmt.Fprintf(stderr, "segdiff patches claims: %s: entry %s "+what+"\n", m.Path, c.Entry, c.Source, c.Node)
		}
	}
	if bad > 0 {
		return 1
	}
	fmt.Fprintf(stdout, "every claim of %s holds on the %d nodes of %s (standard-api: the suite's preflight checks the event streams)\n", m.Path, len(seen), e.ParamsFile)
	return 0
}

func patchesMatrix(m *clientpatch.Manifest, forParams string, stdout, stderr io.Writer) int {
	n, err := m.Nightly()
	if err != nil {
		printErrLines(stderr, "segdiff patches matrix: ", err)
		return 1
	}
	if len(n.Devnets) == 0 {
		fmt.Fprintf(stderr, "segdiff patches matrix: no client in %s lists params\n", m.Path)
		return 1
	}
	if forParams != "" {
		var tags []string
		for _, j := range n.Devnets {
			if j.Params == forParams && !slices.Contains(tags, j.Tags) {
				tags = append(tags, j.Tags)
			}
		}
		if len(tags) != 1 {
			fmt.Fprintf(stderr, "segdiff patches matrix: --for-params %s: %d devnet jobs' tag filters (%q), want exactly one\n", forParams, len(tags), tags)
			return 1
		}
		fmt.Fprintln(stdout, tags[0])
		return 0
	}
	if err := json.NewEncoder(stdout).Encode(nightlyMatrix{matrixOf[clientpatch.ImageJob]{n.Images}, matrixOf[clientpatch.DevnetJob]{n.Devnets}}); err != nil {
		fmt.Fprintf(stderr, "segdiff patches matrix: %v\n", err)
		return 1
	}
	return 0
}
