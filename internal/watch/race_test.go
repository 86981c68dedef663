//go:build race

package watch_test

import "time"

// raceSlack widens the timing tolerance under the race detector, which
// slows every goroutine: on a loaded 2-core machine a reveal's receipt came
// 31 ms after its time (make race, 2026-12-02).
const raceSlack = 50 * time.Millisecond
