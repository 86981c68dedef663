package clientpatch_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/segdiff/segdiff/internal/clientpatch"
)

const goodPatch = `From 1111111111111111111111111111111111111111 Mon Sep 17 00:00:00 2001
From: segdiff <segdiff@example.com>
Subject: [PATCH] demo: change x

Body saying why.
---
 x.go | 4 +++-
 1 file changed, 3 insertions(+), 1 deletion(-)

diff --git a/x.go b/x.go
index 1111111..2222222 100644
--- a/x.go
+++ b/x.go
@@ -1,3 +1,3 @@
 package x
-var a = 1
+var a = 2
 var b = 1
@@ -5,2 +5,4 @@ func f() {
 	return
+	// one
+	// two
 }
diff --git a/y.go b/y.go
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/y.go
@@ -0,0 +1 @@
+package x
-- 
2.39.5
`

func TestParsePatch_Good(t *testing.T) {
	p, err := clientpatch.ParsePatch("good.patch", []byte(goodPatch))
	if err != nil {
		t.Fatal(err)
	}
	if p.Subject != "[PATCH] demo: change x" || len(p.Files) != 2 || len(p.Files[0].Hunks) != 2 || p.Files[1].Name() != "y.go" {
		t.Fatalf("parsed %+v", p)
	}
	if h := p.Files[0].Hunks[1]; h.OldStart != 5 || h.OldLines != 2 || h.NewStart != 5 || h.NewLines != 4 {
		t.Fatalf("hunk 2: %+v", h)
	}
}

func TestParsePatch_Corrupted(t *testing.T) {
	tests := []struct {
		name, old, new, want string
	}{
		{"new count too high", "@@ -5,2 +5,4 @@", "@@ -5,2 +5,5 @@",
			"bad.patch: hunk 2 (@@ -5,2 +5,5 @@) of x.go: header says 5 new lines, body has 4"},
		{"body line dropped", "+\t// two\n", "",
			"bad.patch: hunk 2 (@@ -5,2 +5,4 @@) of x.go: header says 4 new lines, body has 3"},
		{"old count too low", "@@ -1,3 +1,3 @@", "@@ -1,2 +1,3 @@",
			"bad.patch: hunk 1 (@@ -1,2 +1,3 @@) of x.go"},
		{"extra body line", "+\t// two\n", "+\t// two\n+\t// three\n",
			"bad.patch: hunk 2 (@@ -5,2 +5,4 @@) of x.go: header says 4 new lines, body has 5"},
		{"new file count", "@@ -0,0 +1 @@", "@@ -0,0 +1,2 @@",
			"bad.patch: hunk 1 (@@ -0,0 +1,2 @@) of y.go: header says 2 new lines, body has 1"},
		{"malformed header", "@@ -5,2 +5,4 @@", "@@ -5,2 +x @@", "bad.patch: x.go: hunk 2: malformed header"},
		{"no subject", "Subject: [PATCH] demo: change x\n", "", "bad.patch:1: missing Subject: header"},
		{"not format-patch", "From 1111111111111111111111111111111111111111", "diff", "not a git format-patch file"},
		{"missing +++", "+++ b/x.go\n", "", "missing \"---\"/\"+++\" lines"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(goodPatch, tt.old) {
				t.Fatalf("corruption %q does not occur in the good patch", tt.old)
			}
			data := strings.Replace(goodPatch, tt.old, tt.new, 1)
			_, err := clientpatch.ParsePatch("bad.patch", []byte(data))
			var pe *clientpatch.PatchError
			if !errors.As(err, &pe) {
				t.Fatalf("want *PatchError, got %v", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %q\n  want %q", err, tt.want)
			}
		})
	}
}

func FuzzParsePatch(f *testing.F) {
	f.Add([]byte(goodPatch))
	f.Add([]byte("From x\nSubject: s\ndiff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1 +1 @@\n-a\n+b\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := clientpatch.ParsePatch("fuzz.patch", data)
		if err == nil && (p == nil || len(p.Files) == 0) {
			t.Fatalf("accepted a patch without files: %q", data)
		}
	})
}

// gitRepo makes a git repository with x.go as the good patch expects.
func gitRepo(t *testing.T, x string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x.go"), []byte(x), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "init", "-q")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	return dir
}

const xSource = "package x\nvar a = 1\nvar b = 1\nfunc f() {\n\treturn\n}\n"

func writePatches(t *testing.T, bodies ...string) []string {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for i, b := range bodies {
		p := filepath.Join(dir, string(rune('1'+i))+".patch")
		if err := os.WriteFile(p, []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

func TestApply(t *testing.T) {
	ctx := context.Background()
	second := strings.NewReplacer("var a = 1", "var a = 2", "var a = 2\n", "var a = 3\n").Replace(
		"From 2222222222222222222222222222222222222222 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] again\n\n" +
			"diff --git a/x.go b/x.go\n--- a/x.go\n+++ b/x.go\n@@ -1,3 +1,3 @@\n package x\n-var a = 1\n+var a = 2\n var b = 1\n")
	t.Run("series applies in order", func(t *testing.T) {
		dir := gitRepo(t, xSource)
		patches := writePatches(t, goodPatch, second)
		if err := clientpatch.CheckApply(ctx, dir, patches); err != nil {
			t.Fatal(err)
		}
		if err := clientpatch.Apply(ctx, dir, patches); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(filepath.Join(dir, "x.go"))
		if !strings.Contains(string(got), "var a = 3") || !strings.Contains(string(got), "// two") {
			t.Fatalf("x.go after apply:\n%s", got)
		}
		if _, err := os.Stat(filepath.Join(dir, "y.go")); err != nil {
			t.Fatal("y.go not created")
		}
	})
	t.Run("conflict names patch and file, tree untouched", func(t *testing.T) {
		changed := strings.Replace(xSource, "var a = 1", "var a = 42", 1)
		dir := gitRepo(t, changed)
		patches := writePatches(t, goodPatch)
		err := clientpatch.Apply(ctx, dir, patches)
		var c *clientpatch.Conflict
		if !errors.As(err, &c) {
			t.Fatalf("want *Conflict, got %v", err)
		}
		if c.Patch != patches[0] || len(c.Files) != 1 || c.Files[0] != "x.go" {
			t.Fatalf("conflict %+v", c)
		}
		got, _ := os.ReadFile(filepath.Join(dir, "x.go"))
		if string(got) != changed {
			t.Fatal("a failed apply changed the tree")
		}
		if _, err := os.Stat(filepath.Join(dir, "y.go")); err == nil {
			t.Fatal("a failed apply created y.go")
		}
	})
	t.Run("second patch conflicts", func(t *testing.T) {
		dir := gitRepo(t, xSource)
		patches := writePatches(t, goodPatch, goodPatch) // the same change twice cannot apply
		err := clientpatch.CheckApply(ctx, dir, patches)
		var c *clientpatch.Conflict
		if !errors.As(err, &c) || c.Patch != patches[1] {
			t.Fatalf("want a conflict in the second patch, got %v", err)
		}
		if !strings.Contains(err.Error(), "x.go") {
			t.Fatalf("conflict does not name x.go: %v", err)
		}
	})
}
