//go:build race

package steps_test

// raceEnabled: the race detector slows every goroutine, so the live fake
// enclaves' timers run late by tens of milliseconds.
const raceEnabled = true
