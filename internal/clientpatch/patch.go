package clientpatch

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// Patch is one parsed git format-patch file.
type Patch struct {
	Path    string // file the patch was read from
	Subject string // the Subject: header, "[PATCH n/m]" prefix kept
	Files   []FileDiff
}

// FileDiff is the part of a patch that changes one file.
type FileDiff struct {
	OldPath, NewPath string // "/dev/null" for a created or deleted file
	Hunks            []Hunk
}

// Name is the path the diff is about: the new path, or the old one for a
// deletion.
func (f *FileDiff) Name() string {
	if f.NewPath == "/dev/null" {
		return f.OldPath
	}
	return f.NewPath
}

// Hunk is one "@@ -a,b +c,d @@" section.
type Hunk struct {
	Header             string // the "@@ -a,b +c,d @@" part, without the trailing function context
	OldStart, OldLines int
	NewStart, NewLines int
}

// PatchError is a malformed patch, positioned at the file, the patched path
// and the hunk where that applies.
type PatchError struct {
	Path   string // the .patch file
	Line   int    // 1-based line in the .patch file, 0 if not applicable
	Target string // the patched file, "" before the first diff
	Hunk   int    // 1-based hunk index within Target, 0 if not in a hunk
	Header string // the hunk's @@ header
	Msg    string
}

func (e *PatchError) Error() string {
	var b strings.Builder
	b.WriteString(e.Path)
	if e.Hunk > 0 {
		fmt.Fprintf(&b, ": hunk %d (%s) of %s", e.Hunk, e.Header, e.Target)
	} else if e.Target != "" {
		fmt.Fprintf(&b, ": %s", e.Target)
	} else if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

var hunkRE = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`)

// ParsePatchFile reads and parses the patch at path.
func ParsePatchFile(path string) (*Patch, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read patch: %w", err)
	}
	return ParsePatch(path, data)
}

// ParsePatch parses a git format-patch file and checks it is well-formed:
// a From/Subject header, at least one file diff, "---"/"+++" lines, and
// every hunk's body matching the line counts in its header. name is used in
// errors only. The first problem is returned as a *PatchError.
func ParsePatch(name string, data []byte) (*Patch, error) {
	p := &Patch{Path: name}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		return nil, &PatchError{Path: name, Msg: "read: " + err.Error()}
	}
	fail := func(line int, f *FileDiff, msg string, args ...any) error {
		e := &PatchError{Path: name, Line: line, Msg: fmt.Sprintf(msg, args...)}
		if f != nil {
			e.Target = f.Name()
		}
		return e
	}

	// Mail header: "From <sha> <date>", then "Subject:", ending at the first diff.
	i := 0
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "From ") {
		return nil, fail(1, nil, "not a git format-patch file: want a first line \"From <commit> <date>\"")
	}
	for ; i < len(lines) && !strings.HasPrefix(lines[i], "diff --git "); i++ {
		if s, ok := strings.CutPrefix(lines[i], "Subject: "); ok && p.Subject == "" {
			p.Subject = strings.TrimSpace(s)
		}
	}
	if p.Subject == "" {
		return nil, fail(1, nil, "missing Subject: header")
	}
	if i == len(lines) {
		return nil, fail(len(lines), nil, "no \"diff --git\" section")
	}

	for i < len(lines) {
		line := lines[i]
		switch {
		case strings.HasPrefix(line, "diff --git "):
			f, next, err := parseFileDiff(name, lines, i)
			if err != nil {
				return nil, err
			}
			p.Files = append(p.Files, *f)
			i = next
		case line == "-- ":
			// format-patch signature: the rest is the git version.
			return p, nil
		case strings.TrimSpace(line) == "":
			i++
		default:
			return nil, fail(i+1, nil, "unexpected line %q between file diffs", truncate(line))
		}
	}
	return p, nil
}

// parseFileDiff parses one "diff --git" section starting at lines[i] and
// returns the index of the line after it.
func parseFileDiff(name string, lines []string, i int) (*FileDiff, int, error) {
	f := &FileDiff{}
	start := i
	i++
	binary := false
	for ; i < len(lines); i++ {
		l := lines[i]
		if s, ok := strings.CutPrefix(l, "--- "); ok {
			f.OldPath = stripPrefix(s, "a/")
			continue
		}
		if s, ok := strings.CutPrefix(l, "+++ "); ok {
			f.NewPath = stripPrefix(s, "b/")
			i++
			break
		}
		if strings.HasPrefix(l, "GIT binary patch") || strings.HasPrefix(l, "Binary files ") {
			binary = true
		}
		if strings.HasPrefix(l, "diff --git ") || strings.HasPrefix(l, "@@") || l == "-- " {
			break
		}
	}
	header := strings.TrimPrefix(lines[start], "diff --git ")
	if f.OldPath == "" || f.NewPath == "" {
		// A pure rename or mode change has no ---/+++ lines and no hunks.
		if !binary && i < len(lines) && !strings.HasPrefix(lines[i], "@@") {
			if a, b, ok := strings.Cut(header, " b/"); ok {
				f.OldPath, f.NewPath = stripPrefix(a, "a/"), b
				return f, i, nil
			}
		}
		e := &PatchError{Path: name, Line: start + 1, Target: header, Msg: "missing \"---\"/\"+++\" lines"}
		if binary {
			e.Msg = "binary patches are not supported"
		}
		return nil, 0, e
	}

	for i < len(lines) && strings.HasPrefix(lines[i], "@@") {
		h, next, err := parseHunk(name, f, len(f.Hunks)+1, lines, i)
		if err != nil {
			return nil, 0, err
		}
		f.Hunks = append(f.Hunks, h)
		i = next
	}
	if len(f.Hunks) == 0 {
		return nil, 0, &PatchError{Path: name, Line: i + 1, Target: f.Name(), Msg: "no hunks"}
	}
	return f, i, nil
}

// parseHunk parses the hunk at lines[i] and checks its body against the
// header's counts.
func parseHunk(name string, f *FileDiff, n int, lines []string, i int) (Hunk, int, error) {
	g := hunkRE.FindStringSubmatch(lines[i])
	if g == nil {
		return Hunk{}, 0, &PatchError{Path: name, Line: i + 1, Target: f.Name(),
			Msg: fmt.Sprintf("hunk %d: malformed header %q", n, truncate(lines[i]))}
	}
	count := func(s string) int {
		if s == "" {
			return 1 // "@@ -3 +3 @@" means one line
		}
		v, _ := strconv.Atoi(s)
		return v
	}
	h := Hunk{Header: g[0]}
	h.OldStart, _ = strconv.Atoi(g[1])
	h.OldLines = count(g[2])
	h.NewStart, _ = strconv.Atoi(g[3])
	h.NewLines = count(g[4])
	herr := func(line int, msg string, args ...any) error {
		return &PatchError{Path: name, Line: line, Target: f.Name(), Hunk: n, Header: h.Header, Msg: fmt.Sprintf(msg, args...)}
	}

	oldSeen, newSeen := 0, 0
	i++
	for ; i < len(lines); i++ {
		l := lines[i]
		if oldSeen == h.OldLines && newSeen == h.NewLines {
			// Counts are consumed; only a "no newline" marker may still follow.
			if strings.HasPrefix(l, `\`) {
				continue
			}
			if isBodyLine(l) && !strings.HasPrefix(l, "@@") && !strings.HasPrefix(l, "diff --git ") && l != "-- " && l != "" {
				return h, 0, herr(i+1, "body has more lines than the header says (-%d +%d): extra line %q", h.OldLines, h.NewLines, truncate(l))
			}
			break
		}
		switch {
		case l == "" || l[0] == ' ':
			oldSeen++
			newSeen++
		case l[0] == '-' && l != "-- ":
			oldSeen++
		case l[0] == '+':
			newSeen++
		case l[0] == '\\':
		default:
			return h, 0, countErr(herr, i+1, h, oldSeen, newSeen)
		}
		if oldSeen > h.OldLines || newSeen > h.NewLines {
			return h, 0, countErr(herr, i+1, h, oldSeen, newSeen)
		}
	}
	if oldSeen != h.OldLines || newSeen != h.NewLines {
		return h, 0, countErr(herr, i+1, h, oldSeen, newSeen)
	}
	return h, i, nil
}

func isBodyLine(l string) bool {
	return l == "" || l[0] == ' ' || l[0] == '+' || l[0] == '-'
}

// countErr names the first count that disagrees with the header.
func countErr(herr func(int, string, ...any) error, line int, h Hunk, oldSeen, newSeen int) error {
	if newSeen != h.NewLines {
		return herr(line, "header says %d new lines, body has %d", h.NewLines, newSeen)
	}
	return herr(line, "header says %d old lines, body has %d", h.OldLines, oldSeen)
}

func stripPrefix(s, prefix string) string {
	if s == "/dev/null" {
		return s
	}
	// git quotes paths with unusual characters; keep them as they are.
	s, _, _ = strings.Cut(s, "\t")
	return strings.TrimPrefix(s, prefix)
}

func truncate(s string) string {
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}

// oneLine joins a multi-line message into one line.
func oneLine(s string) string {
	var parts []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, "; ")
}
