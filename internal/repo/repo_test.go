package repo_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// maxTrackedSize bounds any file outside test data: a build output or a
// dataset committed by mistake is tens of megabytes.
const maxTrackedSize = 5 << 20

// repoFiles lists the files git tracks or would add (untracked, not
// ignored), relative to the repository root.
func repoFiles(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("list the repository's files (git ls-files): %v; this test needs a git checkout", err)
	}
	var files []string
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if f == "" {
			continue
		}
		if _, err := os.Lstat(f); err == nil { // deleted in the work tree: not in a commit of it
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		t.Fatal("git ls-files listed no file")
	}
	return files
}

// executableMagic are the leading bytes of the executable formats Go
// builds: ELF, Mach-O (32/64-bit, both byte orders, universal) and PE.
var executableMagic = [][]byte{
	[]byte("\x7fELF"),
	{0xfe, 0xed, 0xfa, 0xce}, {0xfe, 0xed, 0xfa, 0xcf}, {0xce, 0xfa, 0xed, 0xfe}, {0xcf, 0xfa, 0xed, 0xfe},
	{0xca, 0xfe, 0xba, 0xbe},
	[]byte("MZ"),
}

// problemOf says why a repository file must not be committed, or "".
func problemOf(path string, size int64, mode os.FileMode, head []byte) string {
	for _, magic := range executableMagic {
		if bytes.HasPrefix(head, magic) {
			return "an executable binary (a build output: git rm --cached it and ignore it)"
		}
	}
	if mode&0o111 != 0 && !bytes.HasPrefix(head, []byte("#!")) {
		return "executable but not a script with a #! line"
	}
	testData := slices.Contains(strings.Split(filepath.ToSlash(path), "/"), "testdata")
	if size > maxTrackedSize && !testData {
		return fmt.Sprintf("%.1f MB, above the %d MB bound for files outside testdata/", float64(size)/1e6, maxTrackedSize>>20)
	}
	return ""
}

// The repository holds sources, not build outputs: no executable binary
// anywhere and no file over 5 MB outside test data, tracked or about to be.
func TestRepositoryHoldsNoBinaries(t *testing.T) {
	var problems []string
	for _, f := range repoFiles(t) {
		info, err := os.Lstat(f)
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		head := make([]byte, 4)
		if fh, err := os.Open(f); err == nil {
			n, _ := fh.Read(head)
			head = head[:n]
			fh.Close()
		}
		if p := problemOf(f, info.Size(), info.Mode(), head); p != "" {
			problems = append(problems, f+": "+p)
		}
	}
	if len(problems) > 0 {
		t.Fatalf("%d files must not be in the repository:\n%s", len(problems), strings.Join(problems, "\n"))
	}
}

func TestProblemOf(t *testing.T) {
	tests := []struct {
		name string
		path string
		size int64
		mode os.FileMode
		head string
		want string
	}{
		{name: "source", path: "main.go", size: 100, mode: 0o644, head: "pack", want: ""},
		{name: "script", path: ".ci/e2e", size: 100, mode: 0o755, head: "#!/u", want: ""},
		{name: "ELF binary", path: "segdiff", size: 66 << 20, mode: 0o755, head: "\x7fELF", want: "executable binary"},
		{name: "ELF without exec bit", path: "bin/x", size: 10, mode: 0o644, head: "\x7fELF", want: "executable binary"},
		{name: "PE", path: "segdiff.exe", size: 10, mode: 0o644, head: "MZ\x90\x00", want: "executable binary"},
		{name: "Mach-O", path: "segdiff-darwin", size: 10, mode: 0o644, head: "\xcf\xfa\xed\xfe", want: "executable binary"},
		{name: "exec bit on data", path: "data.csv", size: 10, mode: 0o755, head: "a,b,", want: "not a script"},
		{name: "large data", path: "sweeps/results/x.json", size: 6 << 20, mode: 0o644, head: "{\"a\"", want: "above the 5 MB bound"},
		{name: "large test data", path: "eip8411/testdata/fuzz/x", size: 6 << 20, mode: 0o644, head: "go t", want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := problemOf(tc.path, tc.size, tc.mode, []byte(tc.head))
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Fatalf("problemOf(%s) = %q, want %q", tc.path, got, tc.want)
			}
		})
	}
}

// workflow is the part of a GitHub Actions workflow that decides which
// shell a step runs in.
type workflow struct {
	Defaults defaults       `yaml:"defaults"`
	Jobs     map[string]job `yaml:"jobs"`
}

type defaults struct {
	Run struct {
		Shell string `yaml:"shell"`
	} `yaml:"run"`
}

type job struct {
	Defaults  defaults `yaml:"defaults"`
	Container any      `yaml:"container"` // an image, or a mapping with one
	Steps     []struct {
		Name  string `yaml:"name"`
		Run   string `yaml:"run"`
		Shell string `yaml:"shell"`
	} `yaml:"steps"`
}

// image is the job's container image, or "" for none.
func (j job) image() string {
	switch c := j.Container.(type) {
	case string:
		return c
	case map[string]any:
		s, _ := c["image"].(string)
		return s
	}
	return ""
}

// pipes reports whether a shell script has a pipeline: a "|" outside
// quotes that is not part of "||".
func pipes(script string) bool {
	var quote rune
	rs := []rune(script)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '#' && (i == 0 || rs[i-1] == ' ' || rs[i-1] == '\n'):
			for i < len(rs) && rs[i] != '\n' {
				i++
			}
		case r == '|':
			prevPipe := i > 0 && rs[i-1] == '|'
			nextPipe := i+1 < len(rs) && rs[i+1] == '|'
			if !prevPipe && !nextPipe {
				return true
			}
		}
	}
	return false
}

// pipefailShell reports whether a step runs under pipefail: GitHub runs the
// shell "bash" as `bash --noprofile --norc -eo pipefail {0}`, while its
// default shell (none given) is `bash -e {0}`; a script may also set it.
func pipefailShell(shell, script string) bool {
	if shell == "bash" {
		return true
	}
	return setPipefail.MatchString(script)
}

// setPipefail matches `set -o pipefail`, `set -euo pipefail` and the like.
var setPipefail = regexp.MustCompile(`(?m)^\s*set\s+(-\w+\s+)*-\w*o\s+pipefail\b`)

// Every workflow step that pipes runs with pipefail, so that `go test |
// tee log` fails the step when the test fails.
func TestWorkflowStepsThatPipeRunWithPipefail(t *testing.T) {
	files, err := filepath.Glob(".github/workflows/*.yml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no workflow in .github/workflows (%v)", err)
	}
	checked := 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var w workflow
		if err := yaml.Unmarshal(raw, &w); err != nil {
			t.Fatalf("parse %s: %v", f, err)
		}
		for name, j := range w.Jobs {
			for i, st := range j.Steps {
				if st.Run == "" || !pipes(st.Run) {
					continue
				}
				checked++
				shell := st.Shell
				if shell == "" {
					shell = j.Defaults.Run.Shell
				}
				if shell == "" {
					shell = w.Defaults.Run.Shell
				}
				if !pipefailShell(shell, st.Run) {
					t.Errorf("%s: job %s, step %d (%q) pipes without pipefail: set `defaults: run: shell: bash` or `set -o pipefail`", f, name, i+1, st.Name)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no workflow step pipes: the pipe detection matches nothing")
	}
}

func TestPipes(t *testing.T) {
	tests := []struct {
		script string
		want   bool
	}{
		{`go test ./... | tee log`, true},
		{`echo "matrix=$(go run ./cmd/segdiff patches matrix)" >> "$GITHUB_OUTPUT"`, false},
		{`make lint || exit 1`, false},
		{`jq -r '.[] | .name' f`, false},
		{"a\nb | c", true},
		{`echo "a | b"`, false},
		{"# a | b\necho", false},
	}
	for _, tc := range tests {
		if got := pipes(tc.script); got != tc.want {
			t.Errorf("pipes(%q) = %v, want %v", tc.script, got, tc.want)
		}
	}
}

// The scripts CI and make run stop at the first failure, pipes included.
func TestScriptsSetPipefail(t *testing.T) {
	var scripts []string
	for _, pattern := range []string{".ci/*"} {
		m, _ := filepath.Glob(pattern)
		scripts = append(scripts, m...)
	}
	if len(scripts) == 0 {
		t.Fatal("no script in .ci/")
	}
	for _, s := range scripts {
		raw, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(raw, []byte("#!")) {
			continue
		}
		if !bytes.Contains(raw, []byte("\nset -euo pipefail\n")) {
			t.Errorf("%s does not `set -euo pipefail`", s)
		}
	}
}
