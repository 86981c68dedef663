package kurtosis

import (
	"errors"
	"fmt"
)

// Sentinels wrapped by the errors of this package; test with errors.Is.
var (
	// ErrNoEngine: no usable Kurtosis engine on 127.0.0.1:9710: nothing
	// answered in time, or its version does not match the SDK's 1.20.
	ErrNoEngine = errors.New("no kurtosis engine")
	// ErrInterpretation: the Starlark package failed to interpret.
	ErrInterpretation = errors.New("starlark interpretation error")
	// ErrValidation: the plan failed validation (images, ports, artifacts).
	ErrValidation = errors.New("starlark validation error")
	// ErrExecution: an instruction failed while executing.
	ErrExecution = errors.New("starlark execution error")
	// ErrRunFailed: the run finished unsuccessfully without saying why.
	ErrRunFailed = errors.New("starlark run failed")
	// ErrStreamEnded: the response stream ended without a RunFinishedEvent
	// (API container died, connection lost).
	ErrStreamEnded = errors.New("starlark response stream ended without a run-finished event")
	// ErrNoEnclave: the named enclave does not exist.
	ErrNoEnclave = errors.New("no such enclave")
	// ErrBadOutput: the package's return value breaks the contract.
	ErrBadOutput = errors.New("bad run output")
	// ErrBadEndpoints: the endpoints file breaks its format.
	ErrBadEndpoints = errors.New("bad endpoints file")
	// ErrChainStalled: the devnet's chain does not progress: a CL's head
	// fell behind the wall clock and stopped advancing, or no CL gave a
	// slot clock (WithStallSlots).
	ErrChainStalled = errors.New("chain stalled")
)

// sdkError shortens a Kurtosis SDK error (a stacktrace with file:line frames)
// to its one-line message chain, keeping the original for errors.As.
type sdkError struct{ err error }

func (e sdkError) Error() string { return fmt.Sprintf("%#s", e.err) }
func (e sdkError) Unwrap() error { return e.err }

func brief(err error) error {
	if err == nil {
		return nil
	}
	return sdkError{err}
}
