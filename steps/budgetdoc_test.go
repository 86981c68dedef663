package steps_test

import (
	"os"
	"testing"

	"github.com/segdiff/segdiff/steps"
)

// TestBudgetsDoc keeps features/BUDGETS.md in step with the features'
// Examples tables (go test ./steps -run TestBudgetsDoc -update rewrites it).
func TestBudgetsDoc(t *testing.T) {
	const path = "../features/BUDGETS.md"
	got, err := steps.BudgetsDoc("../features")
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s (regenerate with -update): %v", path, err)
	}
	if string(want) != got {
		t.Fatalf("%s is stale; run: go test ./steps -run TestBudgetsDoc -update", path)
	}
}
