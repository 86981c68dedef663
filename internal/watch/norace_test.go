//go:build !race

package watch_test

import "time"

// raceSlack is zero without the race detector (race_test.go).
const raceSlack time.Duration = 0
