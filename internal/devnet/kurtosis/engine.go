package kurtosis

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kurtosis-tech/kurtosis/api/golang/core/lib/enclaves"
	"github.com/kurtosis-tech/kurtosis/api/golang/engine/kurtosis_engine_rpc_api_bindings"
	"github.com/kurtosis-tech/kurtosis/api/golang/engine/lib/kurtosis_context"
)

// EngineAddress is where the SDK looks for the engine; it is fixed in SDK
// v1.20.0 (kurtosis_context.DefaultGrpcEngineServerPortNum).
const EngineAddress = "127.0.0.1:9710"

// engineHelp is appended to every ErrNoEngine.
const engineHelp = "start one with `kurtosis engine start` (needs a running Docker daemon and the Kurtosis CLI 1.20.x, " +
	"matching the SDK; see internal/devnet/kurtosis/README.md)"

// connect returns a context for the local engine, or ErrNoEngine within
// timeout. The SDK's constructor takes no context, so it runs in a goroutine
// that is abandoned on timeout (it holds only a lazy gRPC client).
func connect(ctx context.Context, timeout time.Duration) (*kurtosis_context.KurtosisContext, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type result struct {
		kc  *kurtosis_context.KurtosisContext
		err error
	}
	done := make(chan result, 1)
	go func() {
		kc, err := kurtosis_context.NewKurtosisContextFromLocalEngine()
		done <- result{kc, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, fmt.Errorf("connect to kurtosis engine at %s: %w: %w; %s", EngineAddress, ErrNoEngine, brief(r.err), engineHelp)
		}
		return r.kc, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("connect to kurtosis engine at %s: %w: no answer within %v (%w); %s",
			EngineAddress, ErrNoEngine, timeout, ctx.Err(), engineHelp)
	}
}

// findEnclave returns the running enclave named name, ErrNoEnclave if there
// is none.
func findEnclave(ctx context.Context, kc *kurtosis_context.KurtosisContext, name string) (*kurtosis_engine_rpc_api_bindings.EnclaveInfo, error) {
	all, err := kc.GetEnclaves(ctx)
	if err != nil {
		return nil, fmt.Errorf("list enclaves: %w", brief(err))
	}
	infos := all.GetEnclavesByName()[name]
	switch len(infos) {
	case 0:
		return nil, fmt.Errorf("find enclave %q: %w", name, ErrNoEnclave)
	case 1:
		return infos[0], nil
	}
	return nil, fmt.Errorf("find enclave %q: %d enclaves carry that name; remove the extras with `kurtosis enclave rm`", name, len(infos))
}

// enclaveContext opens a running enclave.
func enclaveContext(ctx context.Context, kc *kurtosis_context.KurtosisContext, info *kurtosis_engine_rpc_api_bindings.EnclaveInfo) (*enclaves.EnclaveContext, error) {
	if info.GetContainersStatus() != kurtosis_engine_rpc_api_bindings.EnclaveContainersStatus_EnclaveContainersStatus_RUNNING {
		return nil, fmt.Errorf("open enclave %q: containers are %v, not running; remove it with `segdiff devnet down --enclave %s`",
			info.GetName(), info.GetContainersStatus(), info.GetName())
	}
	ec, err := kc.GetEnclaveContextFromEnclaveInfo(ctx, info)
	if err != nil {
		return nil, fmt.Errorf("open enclave %q: %w", info.GetName(), brief(err))
	}
	return ec, nil
}

// destroy removes the enclave on its own bounded context (ctx's values,
// not its cancellation), so teardown outlives a cancelled caller.
func destroy(ctx context.Context, kc *kurtosis_context.KurtosisContext, name string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	if err := kc.DestroyEnclave(ctx, name); err != nil {
		return fmt.Errorf("destroy enclave %q: %w", name, brief(err))
	}
	return nil
}

// enclaveGone reports whether the engine positively says name does not
// exist (a creation interrupted before the engine acted leaves nothing).
func enclaveGone(ctx context.Context, kc *kurtosis_context.KurtosisContext, name string, timeout time.Duration) bool {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	_, err := findEnclave(ctx, kc, name)
	return isNoEnclave(err)
}

// isNoEnclave reports whether err says the enclave is absent.
func isNoEnclave(err error) bool { return errors.Is(err, ErrNoEnclave) }
