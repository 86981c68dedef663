// Package racedetector says whether the binary runs under the race
// detector. Tests whose work runs in subprocesses built without it (a
// segdiff binary, make e2e) skip under -race: make test has run them, and
// under -race they only repeat the same work slower, minutes of CI's 20.
package racedetector
