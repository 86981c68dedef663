//go:build !race

package racedetector

// Enabled: this binary was built with -race.
const Enabled = false
