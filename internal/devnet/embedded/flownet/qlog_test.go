package flownet

import (
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/segdiff/segdiff/internal/devnet/embedded/netmodel"
	"github.com/segdiff/segdiff/internal/devnet/embedded/qlogstat"
)

// TestQlogTrace_synctest: with QlogDir, flows-cc's window of a 1 MiB
// transfer writes a trace qlogstat reads: the connection's nodes, the data
// sent and the window grown in slow start; without it, nothing is written.
func TestQlogTrace_synctest(t *testing.T) {
	const mib = 1 << 20
	home := netmodel.Rates{UpMbps: 50, DownMbps: 100}
	rates, edges := []netmodel.Rates{home, home}, []netmodel.Edge{{A: 0, B: 1}}
	t.Run("on", func(t *testing.T) {
		dir := t.TempDir()
		var start time.Time
		synctest.Test(t, func(t *testing.T) {
			start = time.Now()
			runWith(t, Options{Congestion: true, QlogDir: dir}, rates, edges, 25*time.Millisecond, []transfer{{0, 1, mib, 0}})
		})
		f, err := os.Open(filepath.Join(dir, "flows-000000-000001_client.sqlog"))
		require.NoError(t, err)
		defer f.Close()
		c, err := qlogstat.Scan(f, []qlogstat.Window{{Slot: 1, Start: start, End: start.Add(time.Second)}}, 0)
		require.NoError(t, err)
		from, _ := qlogstat.NodeOf(c.Local.Addr())
		to, _ := qlogstat.NodeOf(c.Remote.Addr())
		require.Equal(t, [2]int{0, 1}, [2]int{from, to})
		s := c.Slots[0]
		require.GreaterOrEqual(t, s.Stream, mib)
		require.Greater(t, s.CwndPeak, initialWindow)
		require.True(t, s.MinRTTEnd >= 50*time.Millisecond, "min RTT %v", s.MinRTTEnd)
	})
	t.Run("off", func(t *testing.T) {
		dir := t.TempDir()
		synctest.Test(t, func(t *testing.T) {
			runWith(t, Options{Congestion: true}, rates, edges, 25*time.Millisecond, []transfer{{0, 1, mib, 0}})
		})
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		require.Empty(t, entries)
	})
}

// TestCoDelAnyBacklog_synctest: RFC 8289 (the default) forgets a flow's
// time above the target when less than a packet is left behind the chunk
// taken, so a flow one chunk deep is never marked; with CoDelAnyBacklog
// (simnet's queues) it is, once its sojourn has stayed above the target
// for an interval.
func TestCoDelAnyBacklog_synctest(t *testing.T) {
	for _, tt := range []struct {
		name       string
		anyBacklog bool
		want       bool
	}{{"RFC 8289", false, false}, {"any backlog", true, true}} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := newLink(50, true, tt.anyBacklog)
				f := l.flow(1)
				marked := false
				// A chunk every 20 ms, each taken 10 ms after it was queued
				// with nothing behind it.
				for range 10 {
					l.enqueue(f, chunk{data: make([]byte, chunkSize)})
					time.Sleep(10 * time.Millisecond)
					if l.take(f).marked {
						marked = true
					}
					time.Sleep(10 * time.Millisecond)
				}
				require.Equal(t, tt.want, marked)
			})
		})
	}
}

// TestCoDelStateOfAnEmptiedFlow_synctest: a flow marked over a standing
// queue and then drained leaves the round when it comes back empty. With
// CoDelAnyBacklog its CoDel state goes with it, as simnet's FQ-CoDel
// deletes an empty old flow, so marking after the next burst starts at the
// first count; RFC 8289's rule keeps the count, to resume near it.
func TestCoDelStateOfAnEmptiedFlow_synctest(t *testing.T) {
	for _, tt := range []struct {
		name       string
		anyBacklog bool
		keepsCount bool
	}{{"RFC 8289", false, true}, {"any backlog", true, false}} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := newLink(50, true, tt.anyBacklog)
				f := l.flow(1)
				// 300 chunks at once, one taken a millisecond: the sojourn
				// stands above the target for far longer than an interval.
				for range 300 {
					l.enqueue(f, chunk{data: make([]byte, chunkSize)})
				}
				marks := 0
				for range 300 {
					time.Sleep(time.Millisecond)
					c, ok := l.pop()
					require.True(t, ok)
					if c.marked {
						marks++
					}
				}
				require.Greater(t, marks, 1, "a standing queue is marked more than once")
				require.Positive(t, f.codel.count)
				_, ok := l.pop() // the round finds the flow empty
				require.False(t, ok)
				require.False(t, f.listed)
				if tt.keepsCount {
					require.Positive(t, f.codel.count)
				} else {
					require.Equal(t, codel{}, f.codel)
				}
			})
		})
	}
}
