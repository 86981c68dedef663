package steps_test

import (
	"flag"
	"os"
	"testing"

	"github.com/segdiff/segdiff/steps"
)

var update = flag.Bool("update", false, "rewrite SYNTAX.md from the step definitions")

// TestSyntax keeps SYNTAX.md in step with the registered sentences.
func TestSyntax(t *testing.T) {
	got := steps.Syntax()
	if *update {
		if err := os.WriteFile("SYNTAX.md", []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("SYNTAX.md")
	if err != nil {
		t.Fatalf("read SYNTAX.md (regenerate with -update): %v", err)
	}
	if string(want) != got {
		t.Fatalf("SYNTAX.md is stale; run: go test ./steps -run TestSyntax -update")
	}
}
