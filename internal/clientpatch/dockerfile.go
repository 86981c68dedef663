package clientpatch

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
)

// LauncherBinaries are the paths the pinned ethereum-package's launchers
// execute inside a client image, by layer and client type. A patched image
// must provide them: ethereum-package's prysm launcher starts the beacon
// node as `sh -c "exec /beacon-chain …"` (src/cl/prysm/prysm_launcher.star,
// PRYSM_ENTRYPOINT_COMMAND), whatever the image's ENTRYPOINT is. The
// real-package mode of internal/starlarktest checks this table against the
// command the real launcher builds.
var LauncherBinaries = map[string]string{
	LayerCL + "/prysm": "/beacon-chain",
}

// LauncherBinary returns the path ethereum-package executes in an image of
// layer and client type, or "" when the launcher uses the image's PATH or
// entrypoint (nothing to check).
func LauncherBinary(layer, typ string) string { return LauncherBinaries[layer+"/"+typ] }

// ImageFiles returns the absolute paths the final stage of a Dockerfile
// places in the image: COPY and ADD destinations (a directory destination
// gets each source's base name) and the link names of `RUN ln -s` commands,
// including those of a stage the final stage is built FROM. It understands
// line continuations, comments, JSON-form COPY, WORKDIR-relative
// destinations and ARG-free paths; paths it cannot resolve are left out, so
// a check built on it can only fail closed.
func ImageFiles(dockerfile []byte) ([]string, error) {
	stages := map[string][]string{} // by lower-cased AS name
	var cur []string
	name, workdir, seenFrom := "", "/", false
	for _, ins := range instructions(dockerfile) {
		switch ins.cmd {
		case "FROM":
			f := strings.Fields(ins.args)
			for len(f) > 0 && strings.HasPrefix(f[0], "--") {
				f = f[1:] // --platform=...
			}
			if len(f) == 0 {
				return nil, fmt.Errorf("parse Dockerfile: line %d: FROM without an image", ins.line)
			}
			cur, workdir, seenFrom, name = slices.Clone(stages[strings.ToLower(f[0])]), "/", true, ""
			if len(f) >= 3 && strings.EqualFold(f[len(f)-2], "AS") {
				name = strings.ToLower(f[len(f)-1])
			}
		case "WORKDIR":
			workdir = resolvePath(workdir, strings.TrimSpace(ins.args))
		case "COPY", "ADD":
			srcs, dst, err := copyArgs(ins.args)
			if err != nil {
				return nil, fmt.Errorf("parse Dockerfile: line %d: %w", ins.line, err)
			}
			dir := strings.HasSuffix(dst, "/") || dst == "." || len(srcs) > 1
			dst = resolvePath(workdir, dst)
			for _, s := range srcs {
				if dir {
					cur = append(cur, path.Join(dst, path.Base(s)))
				} else {
					cur = append(cur, dst)
				}
			}
		case "RUN":
			for _, link := range symlinks(ins.args) {
				cur = append(cur, resolvePath(workdir, link))
			}
		}
		if name != "" {
			stages[name] = cur
		}
	}
	if !seenFrom {
		return nil, fmt.Errorf("parse Dockerfile: no FROM instruction")
	}
	out := slices.Clone(cur)
	slices.Sort(out)
	return slices.Compact(out), nil
}

// instruction is one Dockerfile instruction, continuations joined.
type instruction struct {
	line      int // first line
	cmd, args string
}

func instructions(data []byte) []instruction {
	var out []instruction
	var cur strings.Builder
	start := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if cur.Len() == 0 && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if strings.HasPrefix(line, "#") {
			continue // a comment inside a continued instruction
		}
		if cur.Len() == 0 {
			start = n
		}
		if cont, ok := strings.CutSuffix(line, `\`); ok {
			cur.WriteString(cont + " ")
			continue
		}
		cur.WriteString(line)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, instruction{line: start, cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args)})
		cur.Reset()
	}
	if cur.Len() > 0 {
		cmd, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, instruction{line: start, cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args)})
	}
	return out
}

// copyArgs splits COPY/ADD arguments into sources and destination, dropping
// --flags; the JSON form ["src", "dst"] is accepted.
func copyArgs(args string) ([]string, string, error) {
	fields := strings.Fields(args)
	for len(fields) > 0 && strings.HasPrefix(fields[0], "--") {
		fields = fields[1:]
	}
	rest := strings.Join(fields, " ")
	if strings.HasPrefix(rest, "[") {
		var parts []string
		if err := json.Unmarshal([]byte(rest), &parts); err != nil {
			return nil, "", fmt.Errorf("COPY/ADD JSON form: %w", err)
		}
		fields = parts
	}
	if len(fields) < 2 {
		return nil, "", fmt.Errorf("COPY/ADD needs a source and a destination, got %q", args)
	}
	return fields[:len(fields)-1], fields[len(fields)-1], nil
}

// symlinks returns the link names of `ln -s[f] target link` commands in a
// RUN instruction (shell form; commands split at &&, ; and ||).
func symlinks(run string) []string {
	var out []string
	for _, cmd := range strings.FieldsFunc(run, func(r rune) bool { return r == ';' || r == '&' || r == '|' }) {
		f := strings.Fields(cmd)
		if len(f) == 0 || f[0] != "ln" {
			continue
		}
		symbolic := false
		var operands []string
		for _, a := range f[1:] {
			if strings.HasPrefix(a, "-") {
				symbolic = symbolic || strings.Contains(a, "s")
				continue
			}
			operands = append(operands, a)
		}
		if !symbolic || len(operands) != 2 {
			continue
		}
		link := operands[1]
		if strings.HasSuffix(link, "/") {
			link = path.Join(link, path.Base(operands[0]))
		}
		out = append(out, link)
	}
	return out
}

// resolvePath makes p absolute against workdir; paths with variables are
// returned as they are (they name nothing ImageFiles can check).
func resolvePath(workdir, p string) string {
	if strings.Contains(p, "$") {
		return p
	}
	if !path.IsAbs(p) {
		p = path.Join(workdir, p)
	}
	return path.Clean(p)
}
