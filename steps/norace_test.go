//go:build !race

package steps_test

// raceEnabled: see race_test.go.
const raceEnabled = false
