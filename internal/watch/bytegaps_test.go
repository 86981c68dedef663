package watch

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// A slot's bytes are the counter at the next boundary minus the counter at
// its own: a read that failed or came back late, or a counter that went
// back, makes a gap of every slot it bounds, with why.
func TestByteGaps(t *testing.T) {
	const late = 100 * time.Millisecond
	ok := func(b uint64) counterRead { return counterRead{bytes: b, present: true, late: 10 * time.Millisecond} }
	tests := []struct {
		name  string
		reads map[uint64]counterRead
		want  map[uint64]string // slot: a fragment of why
	}{
		{"every read on time", map[uint64]counterRead{3: ok(0), 4: ok(10), 5: ok(20)}, map[uint64]string{}},
		{"a failed read", map[uint64]counterRead{3: ok(0), 4: {err: errors.New("refused")}, 5: ok(20)},
			map[uint64]string{3: "slot 4 failed: refused", 4: "slot 4 failed: refused"}},
		{"a late read", map[uint64]counterRead{3: ok(0), 4: {bytes: 10, present: true, late: 740 * time.Millisecond}, 5: ok(20)},
			map[uint64]string{3: "slot 4 came back 740 ms late (limit 100 ms", 4: "slot 4 came back 740 ms late"}},
		{"just in time", map[uint64]counterRead{3: ok(0), 4: {bytes: 10, present: true, late: late}, 5: ok(20)}, map[uint64]string{}},
		{"a counter that went back", map[uint64]counterRead{3: ok(50), 4: ok(10)}, map[uint64]string{3: "went back from 50 to 10"}},
		{"two causes on one slot", map[uint64]counterRead{3: {err: errors.New("refused")}, 4: {bytes: 10, present: true, late: time.Second}},
			map[uint64]string{2: "refused", 3: "refused; the /metrics read (p2p_pubsub_rpc_recv_pub_bytes_total, chain_service_processing_milliseconds) at the start of slot 4 came back 1000 ms late", 4: "1000 ms late"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := byteGaps(tt.reads, late)
			if len(got) != len(tt.want) {
				t.Fatalf("gaps %v, want slots %v", got, tt.want)
			}
			for slot, frag := range tt.want {
				if !strings.Contains(got[slot], frag) {
					t.Errorf("slot %d: %q, want it to say %q", slot, got[slot], frag)
				}
			}
		})
	}
}
