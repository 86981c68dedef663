package kurtosis_test

import (
	"context"
	"testing"

	"github.com/segdiff/segdiff/internal/devnet/kurtosis"
	"github.com/segdiff/segdiff/internal/devnet/kurtosis/kurtosistest"
)

// TestDownOutlivesCancelledContext: Ctrl-C while the engine destroys the
// enclave does not abandon the destroy; the enclave is gone and Down
// reports it.
func TestDownOutlivesCancelledContext(t *testing.T) {
	eng := kurtosistest.Start(t)
	eng.AddEnclave("segdiff-down")
	arrived := eng.SlowDestroy()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-arrived
		cancel()
	}()
	destroyed, err := kurtosis.Down(ctx, kurtosis.WithEnclave("segdiff-down"), kurtosis.WithEndpointsDir(t.TempDir()), kurtosis.WithLog(&syncBuffer{}))
	if err != nil || !destroyed {
		t.Fatalf("Down = %v, %v; want the enclave destroyed", destroyed, err)
	}
	if ctx.Err() == nil {
		t.Fatal("the context was never cancelled: the test proves nothing")
	}
	if got := eng.Enclaves(); len(got) != 0 {
		t.Errorf("enclaves left = %v", got)
	}
}
