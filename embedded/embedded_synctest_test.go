//go:build go1.25

package embedded_test

import (
	"os"
	"testing"
	"time"

	"github.com/segdiff/segdiff/devnet"
	"github.com/segdiff/segdiff/embedded"
)

// smallConfig is a 16-node network that runs in seconds.
func smallConfig(mode devnet.Mode) embedded.Config {
	c := embedded.DefaultConfig()
	c.Nodes = 16
	c.Degree = 14
	c.Mode = mode
	c.Payloads = 2
	return c
}

func simulate(t *testing.T, c embedded.Config) *embedded.Result {
	t.Helper()
	var progress *os.File
	if testing.Verbose() {
		progress = os.Stderr
	}
	res, err := embedded.Simulate(t, c, progress)
	if err != nil {
		t.Fatalf("simulate: %v", err)
	}
	return res
}

func TestEveryNodeCompletes_synctest(t *testing.T) {
	for _, mode := range []devnet.Mode{devnet.ModeWhole, devnet.ModeSegmented, devnet.ModeSegmentedBatch} {
		t.Run(string(mode), func(t *testing.T) {
			res := simulate(t, smallConfig(mode))
			for _, s := range res.Slots {
				for i, c := range s.Completion {
					if c < 0 {
						t.Errorf("slot %d: %s never completed", s.Slot, embedded.NodeID(i))
					}
				}
				p50, _ := s.Quantile(0.5)
				mean, _ := s.Copies()
				t.Logf("slot %d: p50 %v, copies %.2f, ptc %d", s.Slot, p50.Round(time.Millisecond), mean, s.PTC.PayloadPresent)
			}
		})
	}
}
