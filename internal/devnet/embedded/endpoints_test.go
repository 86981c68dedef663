package embedded_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/segdiff/segdiff/internal/devnet/embedded"
)

// TestWriteEndpointsLeavesNoTemporaryFile: a replaced descriptor round-trips,
// and a write that fails (a directory where the file goes) leaves nothing
// beside the target.
func TestWriteEndpointsLeavesNoTemporaryFile(t *testing.T) {
	want := testEndpoints()
	path := filepath.Join(t.TempDir(), "endpoints.json")
	for range 2 {
		if err := embedded.WriteEndpoints(path, want); err != nil {
			t.Fatalf("WriteEndpoints: %v", err)
		}
	}
	got, err := embedded.ReadEndpoints(path)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ReadEndpoints = %+v, %v; want %+v", got, err, want)
	}

	blocked := filepath.Join(filepath.Dir(path), "blocked")
	if err := os.MkdirAll(filepath.Join(blocked, "endpoints.json", "child"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := embedded.WriteEndpoints(filepath.Join(blocked, "endpoints.json"), want); err == nil {
		t.Fatal("WriteEndpoints over a non-empty directory succeeded")
	}
	entries, _ := os.ReadDir(blocked)
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("%s holds %v after a failed write, want only endpoints.json", blocked, names)
	}
}
