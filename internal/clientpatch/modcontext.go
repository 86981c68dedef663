package clientpatch

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/moby/patternmatcher"
	"github.com/moby/patternmatcher/ignorefile"
	"golang.org/x/mod/modfile"
)

// GoModuleContext is what CheckGoModuleContext checked.
type GoModuleContext struct {
	// Replaces are go.mod's replace directives with a local directory as
	// their target, written as in go.mod ("replace a/b => ./third_party/b").
	Replaces []string
	// Steps are the Dockerfile lines of the RUN instructions that run the
	// go command on the source's module.
	Steps []int
}

// CheckGoModuleContext checks that every RUN step of dockerfile that runs
// the go command on the build context's module (go.mod at the context's
// root, found by the step's working directory) has each local replace
// target of that go.mod (replace m => ./dir) in its stage: dir/go.mod at
// the same place relative to go.mod, put there by an earlier COPY or ADD
// from the context or by a bind mount of the context on the step itself
// (RUN --mount=type=bind,...). go reads a replacement directory's go.mod
// as soon as it loads the module graph, so a `go mod download` after
// `COPY go.mod go.sum ./` alone fails. Files the context's .dockerignore
// patterns (ignore) exclude are not in the context. It follows WORKDIR, cd
// and go -C, stages built FROM a stage, JSON-form COPY and RUN, and
// wildcard sources; COPY --from, --parents or --exclude and remote ADD
// sources give nothing, so the check can only fail closed.
//
// context without a go.mod, or a go.mod without a local replace, has
// nothing to check (an empty result). A local replace target outside the
// context, or no go step on the module at all, is an error. dockerfileName
// is used in errors, which are one line each.
func CheckGoModuleContext(dockerfileName string, dockerfile []byte, context fs.FS, ignore []string) (*GoModuleContext, error) {
	res := &GoModuleContext{}
	data, err := fs.ReadFile(context, "go.mod")
	if errors.Is(err, fs.ErrNotExist) {
		return res, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read go.mod: %w", err)
	}
	mf, err := modfile.Parse("go.mod", data, nil)
	if err != nil {
		return nil, fmt.Errorf("parse go.mod: %s", oneLine(err.Error()))
	}
	var targets []localReplace
	for _, r := range mf.Replace {
		if r.New.Version != "" || !modfile.IsDirectoryPath(r.New.Path) {
			continue
		}
		lr := localReplace{directive: replaceString(r), line: r.Syntax.Start.Line}
		dir := path.Clean(filepath.ToSlash(r.New.Path))
		if path.IsAbs(dir) || dir == ".." || strings.HasPrefix(dir, "../") || strings.Contains(dir, ":") {
			return nil, fmt.Errorf("go.mod:%d: %s: the target is outside the checkout (the build context), so no Dockerfile step can see it; move it into the checkout", lr.line, lr.directive)
		}
		lr.dir = dir
		targets = append(targets, lr)
		res.Replaces = append(res.Replaces, lr.directive)
	}
	if len(targets) == 0 {
		return res, nil
	}
	bc, err := newBuildContext(context, ignore)
	if err != nil {
		return nil, err
	}

	stages := map[string]stageState{} // by lower-cased AS name
	cur := stageState{workdir: "/"}
	seenFrom := false
	for _, ins := range instructions(dockerfile) {
		switch ins.cmd {
		case "FROM":
			f := strings.Fields(ins.args)
			for len(f) > 0 && strings.HasPrefix(f[0], "--") {
				f = f[1:]
			}
			if len(f) == 0 {
				return nil, fmt.Errorf("%s:%d: FROM without an image", dockerfileName, ins.line)
			}
			seenFrom = true
			base, ok := stages[strings.ToLower(f[0])]
			if !ok {
				base = stageState{workdir: "/"}
			}
			cur = stageState{workdir: base.workdir, copies: slices.Clone(base.copies)}
			if len(f) >= 3 && strings.EqualFold(f[len(f)-2], "AS") {
				cur.name = strings.ToLower(f[len(f)-1])
			}
		case "WORKDIR":
			cur.workdir = resolvePath(cur.workdir, strings.TrimSpace(ins.args))
		case "COPY", "ADD":
			cur.copies = append(cur.copies, bc.contextCopies(ins, cur.workdir)...)
		case "RUN":
			mounts, cmd := bc.runMounts(ins.args, cur.workdir)
			visible := append(slices.Clone(cur.copies), mounts...)
			for _, step := range goSteps(cmd, cur.workdir) {
				root, ok := bc.moduleRoot(visible, step.dir)
				if !ok {
					continue // not the context's module
				}
				if len(res.Steps) == 0 || res.Steps[len(res.Steps)-1] != ins.line {
					res.Steps = append(res.Steps, ins.line)
				}
				var missing, fixes []string
				for _, t := range targets {
					if why, fix := bc.missing(visible, root, t.dir, step.text); why != "" {
						missing = append(missing, fmt.Sprintf("the target of go.mod:%d %q (%s)", t.line, t.directive, why))
						fixes = append(fixes, fix)
					}
				}
				if len(missing) > 0 {
					return nil, fmt.Errorf("%s:%d: RUN %s cannot see %s; %s",
						dockerfileName, ins.line, step.text, strings.Join(missing, ", nor "), strings.Join(fixes, "; "))
				}
			}
		}
		if cur.name != "" {
			stages[cur.name] = cur
		}
	}
	if !seenFrom {
		return nil, fmt.Errorf("%s: no FROM instruction", dockerfileName)
	}
	if len(res.Steps) == 0 {
		return nil, fmt.Errorf("%s: no RUN step runs go on the checkout's module (its go.mod in the step's directory), so go.mod's local replace targets (%s) cannot be checked; COPY go.mod and the targets to the WORKDIR before the go step",
			dockerfileName, strings.Join(res.Replaces, ", "))
	}
	return res, nil
}

// localReplace is one replace directive of go.mod with a directory target.
type localReplace struct {
	directive string // as in go.mod
	line      int    // go.mod line
	dir       string // the target, cleaned, relative to go.mod
}

func replaceString(r *modfile.Replace) string {
	old := r.Old.Path
	if r.Old.Version != "" {
		old += " " + r.Old.Version
	}
	return "replace " + old + " => " + r.New.Path
}

// stageState is what a build stage holds from the context at one point.
type stageState struct {
	name    string // lower-cased AS name, "" for none
	workdir string
	copies  []contextCopy
}

// contextCopy is a context path placed at an image path: a directory's
// contents (dir) or one file.
type contextCopy struct {
	src string // context path, "." for the root
	dir bool
	dst string // absolute image path
}

// buildContext is the source checkout as docker build sends it.
type buildContext struct {
	fsys   fs.FS
	ignore *patternmatcher.PatternMatcher
}

func newBuildContext(fsys fs.FS, ignore []string) (*buildContext, error) {
	pm, err := patternmatcher.New(ignore)
	if err != nil {
		return nil, fmt.Errorf("parse .dockerignore: %w", err)
	}
	return &buildContext{fsys: fsys, ignore: pm}, nil
}

// stat reports whether p is in the context and whether it is a directory;
// ignored is true when it exists but .dockerignore excludes it.
func (bc *buildContext) stat(p string) (exists, dir, ignored bool) {
	st, err := fs.Stat(bc.fsys, p)
	if err != nil {
		return false, false, false
	}
	if p != "." {
		if m, err := bc.ignore.MatchesOrParentMatches(p); err != nil || m {
			return true, st.IsDir(), true
		}
	}
	return true, st.IsDir(), false
}

// contextPath cleans a COPY source or mount source into a context path.
func contextPath(p string) string {
	c := strings.TrimPrefix(path.Clean("/"+filepath.ToSlash(p)), "/")
	if c == "" {
		return "."
	}
	return c
}

// contextCopies returns what a COPY or ADD instruction places from the
// context, nothing for COPY --from, --parents or --exclude.
func (bc *buildContext) contextCopies(ins instruction, workdir string) []contextCopy {
	flags, rest := splitFlags(ins.args)
	for _, f := range flags {
		if strings.HasPrefix(f, "--from") || strings.HasPrefix(f, "--parents") || strings.HasPrefix(f, "--exclude") {
			return nil
		}
	}
	srcs, dst, err := copyArgs(rest)
	if err != nil {
		return nil
	}
	var matched []string
	wildcard := false
	for _, s := range srcs {
		if ins.cmd == "ADD" && (strings.Contains(s, "://") || strings.HasPrefix(s, "git@")) {
			continue
		}
		p := contextPath(s)
		if strings.ContainsAny(p, "*?[") {
			wildcard = true
			m, _ := fs.Glob(bc.fsys, p)
			matched = append(matched, m...)
			continue
		}
		matched = append(matched, p)
	}
	to := resolvePath(workdir, dst)
	intoDir := strings.HasSuffix(dst, "/") || len(srcs) > 1 || wildcard || to == workdir
	var out []contextCopy
	for _, p := range matched {
		exists, dir, ignored := bc.stat(p)
		switch {
		case !exists || ignored:
		case dir:
			out = append(out, contextCopy{src: p, dir: true, dst: to})
		case intoDir:
			out = append(out, contextCopy{src: p, dst: path.Join(to, path.Base(p))})
		default:
			out = append(out, contextCopy{src: p, dst: to})
		}
	}
	return out
}

// runMounts returns the context bind mounts of a RUN instruction's flags
// and the command after them.
func (bc *buildContext) runMounts(args, workdir string) ([]contextCopy, string) {
	flags, cmd := splitFlags(args)
	var out []contextCopy
	for _, f := range flags {
		spec, ok := strings.CutPrefix(f, "--mount=")
		if !ok {
			continue
		}
		typ, src, target, from := "bind", ".", "", ""
		for _, kv := range strings.Split(spec, ",") {
			k, v, _ := strings.Cut(kv, "=")
			switch strings.ToLower(k) {
			case "type":
				typ = v
			case "source", "src":
				src = v
			case "target", "dst", "destination":
				target = v
			case "from":
				from = v
			}
		}
		if typ != "bind" || from != "" || target == "" {
			continue
		}
		p := contextPath(src)
		if exists, dir, ignored := bc.stat(p); exists && !ignored {
			out = append(out, contextCopy{src: p, dir: dir, dst: resolvePath(workdir, target)})
		}
	}
	return out, cmd
}

// splitFlags splits leading --flags off an instruction's arguments.
func splitFlags(args string) (flags []string, rest string) {
	rest = strings.TrimSpace(args)
	for strings.HasPrefix(rest, "--") {
		f, r, _ := strings.Cut(rest, " ")
		flags = append(flags, f)
		rest = strings.TrimSpace(r)
	}
	return flags, rest
}

// contextAt returns the context path whose content is at image path img,
// the latest copy winning.
func (bc *buildContext) contextAt(visible []contextCopy, img string) (string, bool) {
	for i := len(visible) - 1; i >= 0; i-- {
		c := visible[i]
		if !c.dir {
			if c.dst == img {
				return c.src, true
			}
			continue
		}
		rel, ok := strings.CutPrefix(img, strings.TrimSuffix(c.dst, "/")+"/")
		if !ok {
			continue
		}
		p := path.Join(c.src, rel)
		if exists, _, ignored := bc.stat(p); exists && !ignored {
			return p, true
		}
	}
	return "", false
}

// moduleRoot returns the image directory of the context's go.mod when the
// go command, run in dir, finds that go.mod (the nearest go.mod at or above
// dir is the context's root one).
func (bc *buildContext) moduleRoot(visible []contextCopy, dir string) (string, bool) {
	for d := dir; ; d = path.Dir(d) {
		if p, ok := bc.contextAt(visible, path.Join(d, "go.mod")); ok {
			return d, p == "go.mod"
		}
		if d == "/" || d == "." || strings.Contains(d, "$") {
			return "", false
		}
	}
}

// missing says why replace target dir is not at root/dir in the stage of
// go step cmd, and the fix; "" when it is there.
func (bc *buildContext) missing(visible []contextCopy, root, dir, cmd string) (why, fix string) {
	want := path.Join(dir, "go.mod")
	at := path.Join(root, want)
	if p, ok := bc.contextAt(visible, at); ok && p == want {
		return "", ""
	}
	switch exists, _, ignored := bc.stat(want); {
	case !exists:
		return "the checkout has no " + want, "check out " + dir + " or correct the replace directive"
	case ignored:
		return want + " is excluded from the build context by .dockerignore", "stop .dockerignore excluding " + dir
	default:
		return at + " is not in the stage at this step", fmt.Sprintf("before this step COPY %s %s, or bind-mount the checkout into it: RUN --mount=type=bind,target=%s %s",
			dir, path.Join(root, dir), root, cmd)
	}
}

// goStep is one go command in a RUN instruction that loads the module.
type goStep struct {
	text string // the command, as written
	dir  string // its working directory
}

// goModuleCommands are the go subcommands that load the main module's
// graph (and so read every replacement directory's go.mod); for "mod",
// the mod subcommands that do.
var (
	goModuleCommands = []string{"build", "generate", "get", "install", "list", "mod", "run", "test", "vet"}
	goModCommands    = []string{"download", "graph", "tidy", "vendor", "verify", "why"}
)

// goSteps returns the module-loading go commands of a RUN command line
// (shell form split at &&, ||, ; and |, or JSON exec form), following cd.
func goSteps(cmd, workdir string) []goStep {
	var commands [][]string
	if strings.HasPrefix(cmd, "[") {
		var words []string
		if json.Unmarshal([]byte(cmd), &words) == nil {
			commands = append(commands, words)
		}
	} else {
		for _, c := range strings.FieldsFunc(cmd, func(r rune) bool { return r == ';' || r == '&' || r == '|' }) {
			commands = append(commands, strings.Fields(c))
		}
	}
	var out []goStep
	dir := workdir
	for _, words := range commands {
		for len(words) > 0 && (words[0] == "env" || isAssignment(words[0])) {
			words = words[1:]
		}
		if len(words) == 0 {
			continue
		}
		if words[0] == "cd" {
			if len(words) > 1 {
				dir = resolvePath(dir, words[1])
			}
			continue
		}
		if words[0] != "go" && !strings.HasSuffix(words[0], "/go") {
			continue
		}
		stepDir, args := dir, words[1:]
		if len(args) >= 2 && args[0] == "-C" {
			stepDir, args = resolvePath(dir, args[1]), args[2:]
		} else if len(args) >= 1 && strings.HasPrefix(args[0], "-C=") {
			stepDir, args = resolvePath(dir, strings.TrimPrefix(args[0], "-C=")), args[1:]
		}
		if len(args) == 0 || !slices.Contains(goModuleCommands, args[0]) {
			continue
		}
		if args[0] == "mod" && (len(args) < 2 || !slices.Contains(goModCommands, args[1])) {
			continue
		}
		if (args[0] == "install" || args[0] == "run") && slices.ContainsFunc(args[1:], func(a string) bool {
			return !strings.HasPrefix(a, "-") && strings.Contains(a, "@")
		}) {
			continue // pkg@version ignores the current module
		}
		out = append(out, goStep{text: strings.Join(words, " "), dir: stepDir})
	}
	return out
}

// isAssignment reports whether a shell word is a VAR=value prefix.
func isAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	if !ok || name == "" {
		return false
	}
	for i, r := range name {
		if r != '_' && (r < 'A' || r > 'Z') && (r < 'a' || r > 'z') && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return true
}

// CheckBuildContext runs CheckGoModuleContext on c's Dockerfile against the
// client checkout at source, with the .dockerignore docker build uses: a
// <Dockerfile>.dockerignore beside the Dockerfile, else the checkout's own.
func (m *Manifest) CheckBuildContext(c *Client, source string) (*GoModuleContext, error) {
	if c.Build == nil {
		return nil, fmt.Errorf("check build context: %s has no build recipe", c.Name)
	}
	name := filepath.Join(m.Dir(), filepath.FromSlash(c.Build.Dockerfile))
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("check build context: %w", err)
	}
	var ignore []string
	for _, p := range []string{name + ".dockerignore", filepath.Join(source, ".dockerignore")} {
		f, err := os.Open(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("check build context: %w", err)
		}
		ignore, err = ignorefile.ReadAll(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("check build context: read %s: %w", p, err)
		}
		break
	}
	return CheckGoModuleContext(name, data, os.DirFS(source), ignore)
}
