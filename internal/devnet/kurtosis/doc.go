// Package kurtosis runs the segdiff devnet in a Kurtosis enclave through the
// Kurtosis Go SDK (v1.20.0) and attaches the suite to it.
//
// Lifecycle (used by `segdiff devnet up|down|status`): Up checks and loads a
// network-params file, resolves "@clients/<name>" images with clientpatch,
// runs the local Starlark package (kurtosis/) in a created or reused enclave
// (offline, a staged copy whose imports come from local source archives:
// WithPackageSources), requires a successful RunFinishedEvent, decodes the
// package's output (RunOutput), discovers public URLs, watches every CL's
// head until the chain has progressed, failing on a stalled one
// (WithProgressSlots, WithStallSlots), and writes the endpoints file
// (Endpoints) atomically; Down destroys the enclave; GetStatus lists it.
// Up's teardown and Down destroy on a context of their own, so Ctrl-C does
// not abandon a destroy.
//
// Backend: the package registers devnet backend "kurtosis" (Open), which
// reads the endpoints file and serves Nodes, Timing and PTC (through package
// beacon) and PrometheusURL.
//
// See README.md for prerequisites, the endpoints file format and what the
// offline tests (a fake engine and API container served to the unmodified
// SDK) prove.
package kurtosis
