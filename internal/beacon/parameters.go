package beacon

import (
	"errors"
	"time"
)

// Parameter configures New.
type Parameter interface {
	apply(*parameters)
}

type parameters struct {
	address string
	timeout time.Duration
}

type parameterFunc func(*parameters)

func (f parameterFunc) apply(p *parameters) { f(p) }

// WithAddress sets the beacon API base URL (http://host:port). Required.
func WithAddress(address string) Parameter {
	return parameterFunc(func(p *parameters) { p.address = address })
}

// WithTimeout bounds each HTTP request. Default 10 s.
func WithTimeout(timeout time.Duration) Parameter {
	return parameterFunc(func(p *parameters) { p.timeout = timeout })
}

func parseAndCheckParameters(params ...Parameter) (*parameters, error) {
	p := &parameters{timeout: 10 * time.Second}
	for _, param := range params {
		if param != nil {
			param.apply(p)
		}
	}
	if p.address == "" {
		return nil, errors.New("no address specified")
	}
	if p.timeout <= 0 {
		return nil, errors.New("timeout must be positive")
	}
	return p, nil
}
