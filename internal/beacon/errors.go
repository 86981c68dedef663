package beacon

import "errors"

// ErrNoSpecValue is returned when the node's /eth/v1/config/spec lacks a value
// the reader needs, or carries it with an unexpected type.
var ErrNoSpecValue = errors.New("spec value missing")
