package beacon_test

import (
	"go/build"
	"strings"
	"testing"
)

// TestImportsNoDevnet: the beacon API reader sits below the devnet
// interface (which hands its values on), so it must not import it; the
// values they share live in package chainview.
func TestImportsNoDevnet(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		if imp == "github.com/segdiff/segdiff/internal/devnet" || strings.HasPrefix(imp, "github.com/segdiff/segdiff/internal/devnet/") {
			t.Errorf("package beacon imports %s", imp)
		}
	}
	if len(pkg.Imports) == 0 {
		t.Fatal("no imports read: the check saw nothing")
	}
}
