package kurtosis_test

import (
	"context"
	"os"
	"testing"

	"github.com/segdiff/segdiff/internal/devnet/kurtosis"
	"github.com/segdiff/segdiff/internal/devnet/kurtosis/kurtosistest"
)

// TestUpLeavesNothingInTMPDIR: a test that uploads a package to the fake
// engine leaves nothing in $TMPDIR once it is done. The SDK compresses each
// upload into an upload-compression-cache-* folder it never removes, and the
// engine-port lock was a file there: make test left 17 folders and the lock.
func TestUpLeavesNothingInTMPDIR(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Run("up", func(t *testing.T) {
		eng := kurtosistest.Start(t)
		eng.APIC.Script(kurtosistest.EndEOF, successScript(t)...)
		addServices(eng.APIC)
		log := &syncBuffer{}
		params := upParams(t, "segdiff-test", writePackage(t), writeFile(t, "p.yaml", testParams), t.TempDir(), log)
		if _, err := kurtosis.Up(context.Background(), params...); err != nil {
			t.Fatalf("Up: %v\nlog:\n%s", err, log)
		}
		if id, _ := eng.APIC.Package(); id == "" {
			t.Fatal("Up uploaded no package: nothing here would have written to $TMPDIR")
		}
	})
	entries, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("left %s in $TMPDIR", e.Name())
	}
}
