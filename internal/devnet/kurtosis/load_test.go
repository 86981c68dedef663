package kurtosis_test

import (
	"context"
	"strings"
	"testing"

	"github.com/segdiff/segdiff/internal/devnet/kurtosis"
	"github.com/segdiff/segdiff/internal/devnet/kurtosis/kurtosistest"
)

// TestUpReportsTheLoad: a run whose output names a load service records it
// in the endpoints and says where its table is; one that names a service the
// enclave lacks fails discovery.
func TestUpReportsTheLoad(t *testing.T) {
	withLoad := func(m map[string]any) { m["load_service"] = "segdiff-load" }
	for _, tt := range []struct {
		name      string
		register  bool
		wantErr   string
		wantInLog string
	}{
		{"started", true, "", "transaction load running as segdiff-load (per-block table: kurtosis service logs segdiff-load-test segdiff-load)"},
		{"missing", false, `discover load service "segdiff-load"`, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			eng := kurtosistest.Start(t)
			eng.APIC.Script(kurtosistest.EndEOF, kurtosistest.Lines(kurtosistest.Interpreting(),
				[]*kurtosistest.Line{kurtosistest.Success(runOutput(t, withLoad))})...)
			addServices(eng.APIC)
			if tt.register {
				eng.APIC.AddService("segdiff-load", map[string]uint32{})
			}
			log := &syncBuffer{}
			e, err := kurtosis.Up(context.Background(), upParams(t, "segdiff-load-test", writePackage(t), writeFile(t, "p.yaml", testParams), t.TempDir(), log)...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Up error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Up: %v\n%s", err, log)
			}
			if e.LoadService != "segdiff-load" || !strings.Contains(log.String(), tt.wantInLog) {
				t.Errorf("load service %q, log:\n%s", e.LoadService, log)
			}
		})
	}
}
