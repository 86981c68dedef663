package kurtosis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/kurtosis-tech/kurtosis/api/golang/core/lib/enclaves"
	"github.com/kurtosis-tech/kurtosis/api/golang/core/lib/starlark_run_config"
	"github.com/kurtosis-tech/kurtosis/api/golang/engine/lib/kurtosis_context"
	"gopkg.in/yaml.v3"

	"github.com/segdiff/segdiff/internal/clientpatch"
)

// Up starts (or re-runs) the devnet: with WithPackageSources it first
// checks the source archives and stages the package with its imports
// local; it checks and loads the params file, resolves "@clients/<name>"
// images, connects to the engine, creates the enclave or reuses a running
// one of that name (WithFresh destroys it first), runs the local package
// with the params, decodes the run output, discovers every service's
// public URLs, waits for the chain to progress (WithProgressSlots) and
// writes the endpoints file atomically. Progress goes to WithLog.
//
// Up succeeds only on a RunFinishedEvent with IsRunSuccessful and, unless
// WithProgressSlots(0), once every CL's head advanced; from the moment the
// package starts CLs, a stalled head ends the run and Up with an error
// wrapping ErrChainStalled (see WithStallSlots). If ctx is
// cancelled (Ctrl-C) after Up began creating the enclave, the enclave is
// destroyed on its own context bounded by WithTeardownTimeout; a reused
// enclave is left as it was. Any other failure leaves a created enclave for
// inspection and says how to remove it.
func Up(ctx context.Context, params ...Parameter) (endpoints *Endpoints, err error) {
	p, err := parseAndCheckParameters(params...)
	if err != nil {
		return nil, fmt.Errorf("devnet up: %w", err)
	}
	if p.paramsFile == "" {
		return nil, errors.New("devnet up: no params file specified")
	}
	pkgDir := p.packageDir
	if p.packageSources != "" {
		staged, cleanup, err := stageSources(ctx, p)
		if err != nil {
			return nil, fmt.Errorf("devnet up: %w", err)
		}
		defer cleanup()
		pkgDir = staged
	}
	serialized, err := loadParams(p)
	if err != nil {
		return nil, fmt.Errorf("devnet up: %w", err)
	}
	kc, err := connect(ctx, p.connectTimeout)
	if err != nil {
		return nil, fmt.Errorf("devnet up: %w", err)
	}
	ec, created, err := openOrCreate(ctx, kc, p)
	if created {
		// Runs on every return path once creation was attempted.
		defer func() {
			if ctx.Err() == nil || err == nil {
				if err != nil && ec != nil {
					fmt.Fprintf(p.log, "enclave %q kept for inspection (`kurtosis enclave inspect %s`); remove it with `segdiff devnet down --enclave %s`\n",
						p.enclave, p.enclave, p.enclave)
				}
				return
			}
			fmt.Fprintf(p.log, "interrupted: destroying enclave %q\n", p.enclave)
			if derr := destroy(ctx, kc, p.enclave, p.teardownTimeout); derr != nil && !enclaveGone(ctx, kc, p.enclave, p.teardownTimeout) {
				err = errors.Join(err, derr)
			}
		}()
	}
	if err != nil {
		return nil, fmt.Errorf("devnet up: %w", err)
	}
	endpoints, err = runAndDiscover(ctx, ec, p, serialized, pkgDir)
	if err != nil {
		return nil, fmt.Errorf("devnet up: %w", err)
	}
	return endpoints, nil
}

// runAndDiscover runs the package in pkgDir (p.packageDir, or its staged
// copy), watching the chain from the moment the package starts CLs: a
// stalled head ends the run at once. After a successful run it discovers
// the services, waits until every CL's head advanced the progress slots
// and writes the endpoints file.
func runAndDiscover(ctx context.Context, ec *enclaves.EnclaveContext, p *parameters, serialized, pkgDir string) (*Endpoints, error) {
	cfg := starlark_run_config.NewRunStarlarkConfig(
		starlark_run_config.WithSerializedParams(serialized),
		starlark_run_config.WithAllowPrivilegedMode(p.privileged),
	)
	if pkgDir == p.packageDir {
		fmt.Fprintf(p.log, "running package %s in enclave %q with %s\n", p.packageDir, p.enclave, p.paramsFile)
	} else {
		fmt.Fprintf(p.log, "running package %s (staged in %s, its imports local) in enclave %q with %s\n", p.packageDir, pkgDir, p.enclave, p.paramsFile)
	}
	// The watch ends the run with its stall as the cause; ctx's end stays
	// an interruption.
	runCtx, stopRun := context.WithCancelCause(ctx)
	defer stopRun(nil)
	lines, cancelRun, err := ec.RunStarlarkPackage(runCtx, pkgDir, cfg)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("run package %s: %w", p.packageDir, ctx.Err())
		}
		return nil, fmt.Errorf("run package %s: %w", p.packageDir, brief(err))
	}
	var (
		watch     *chainWatcher
		stallErr  error
		stopWatch = func() {}
	)
	if p.progressSlots > 0 {
		watch = newChainWatcher(p)
		watchCtx, cancelWatch := context.WithCancel(runCtx)
		done := make(chan error, 1)
		go func() {
			err := watch.watchDuringRun(watchCtx, ec, p.chainPoll)
			if err != nil {
				stopRun(err)
			}
			done <- err
		}()
		stopWatch = sync.OnceFunc(func() {
			cancelWatch()
			stallErr = <-done
		})
		defer stopWatch()
	}
	res, err := consumeRun(runCtx, lines, cancelRun, p.log)
	stopWatch()
	if err != nil {
		return nil, err
	}
	if stallErr != nil { // found as the run finished
		return nil, stallErr
	}
	out, err := ParseRunOutput([]byte(res.Output))
	if err != nil {
		return nil, err
	}
	e, err := discover(ec, p.enclave, out)
	if err != nil {
		return nil, err
	}
	if watch != nil {
		if err := watch.waitForProgress(ctx, endpointTargets(ec, e, watch.targets), p.chainTimeout, p.chainPoll); err != nil {
			return nil, err
		}
	}
	e.EnclaveUUID = string(ec.GetEnclaveUuid())
	e.ParamsFile = p.paramsFile
	e.WrittenAt = time.Now().UTC().Truncate(time.Second)
	path := EndpointsPath(p.endpointsDir, p.enclave)
	if err := WriteEndpoints(path, e); err != nil {
		return nil, err
	}
	fmt.Fprintf(p.log, "devnet %q up: %d nodes, mode %s; endpoints in %s\n", p.enclave, len(e.Nodes), e.Mode, path)
	if e.LoadService != "" {
		fmt.Fprintf(p.log, "transaction load running as %s (per-block table: kurtosis service logs %s %s)\n", e.LoadService, p.enclave, e.LoadService)
	}
	return e, nil
}

// openOrCreate reuses a running enclave named p.enclave or creates it.
// created reports that creation was attempted, so a cancelled caller knows
// to tear down even when the engine's answer never arrived.
func openOrCreate(ctx context.Context, kc *kurtosis_context.KurtosisContext, p *parameters) (ec *enclaves.EnclaveContext, created bool, err error) {
	info, err := findEnclave(ctx, kc, p.enclave)
	switch {
	case err == nil && !p.fresh:
		fmt.Fprintf(p.log, "reusing enclave %q (%s); the package re-runs in it\n", p.enclave, info.GetEnclaveUuid())
		ec, err := enclaveContext(ctx, kc, info)
		return ec, false, err
	case err == nil && p.fresh:
		fmt.Fprintf(p.log, "destroying enclave %q first (--fresh)\n", p.enclave)
		if err := destroy(ctx, kc, p.enclave, p.teardownTimeout); err != nil {
			return nil, false, err
		}
	case !isNoEnclave(err):
		return nil, false, err
	}
	fmt.Fprintf(p.log, "creating enclave %q\n", p.enclave)
	ec, err = kc.CreateEnclave(ctx, p.enclave)
	if err != nil {
		if ctx.Err() != nil {
			return nil, true, fmt.Errorf("create enclave %q: %w", p.enclave, ctx.Err())
		}
		return nil, true, fmt.Errorf("create enclave %q: %w", p.enclave, brief(err))
	}
	return ec, true, nil
}

// loadParams runs the params check, reads the YAML, resolves client-patch
// image references and participants' segdiff.role flags, and returns the
// args as JSON. A `segdiff.link_classes` section turns on privileged mode,
// which link shaping needs.
func loadParams(p *parameters) (string, error) {
	if p.check != nil {
		if err := p.check(p.paramsFile); err != nil {
			return "", fmt.Errorf("check params: %w", err)
		}
	}
	data, err := os.ReadFile(p.paramsFile)
	if err != nil {
		return "", fmt.Errorf("read params: %w", err)
	}
	var args map[string]any
	if err := yaml.Unmarshal(data, &args); err != nil {
		return "", fmt.Errorf("read params %s: %w", p.paramsFile, err)
	}
	if len(args) == 0 {
		return "", fmt.Errorf("read params %s: empty document", p.paramsFile)
	}
	if hasImageRef(args) || clientpatch.HasRoles(args) {
		m, err := clientpatch.LoadFile(p.manifest)
		if err != nil {
			return "", fmt.Errorf("resolve %s images and roles in %s: %w", clientpatch.ImageRefPrefix, p.paramsFile, err)
		}
		if err := clientpatch.ResolveParticipants(args, m); err != nil {
			return "", fmt.Errorf("resolve %s images and roles in %s: %w", clientpatch.ImageRefPrefix, p.paramsFile, err)
		}
	}
	if sd, ok := args["segdiff"].(map[string]any); ok && sd["link_classes"] != nil && !p.privileged {
		fmt.Fprintln(p.log, "segdiff.link_classes is set: running privileged (link shaping needs it; Docker backend only)")
		p.privileged = true
	}
	out, err := json.Marshal(args)
	if err != nil {
		return "", fmt.Errorf("encode params %s as JSON: %w", p.paramsFile, err)
	}
	return string(out), nil
}

// hasImageRef reports whether any string in v is an "@clients/" reference.
func hasImageRef(v any) bool {
	switch x := v.(type) {
	case string:
		return strings.HasPrefix(x, clientpatch.ImageRefPrefix)
	case map[string]any:
		for _, e := range x {
			if hasImageRef(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if hasImageRef(e) {
				return true
			}
		}
	}
	return false
}

// Down destroys the enclave and removes its endpoints file. A missing
// enclave is not an error (Down is idempotent); destroyed reports whether
// one was removed. The destroy runs on its own context bounded by
// WithTeardownTimeout, so a cancelled ctx (Ctrl-C) does not abandon it.
func Down(ctx context.Context, params ...Parameter) (destroyed bool, err error) {
	p, err := parseAndCheckParameters(params...)
	if err != nil {
		return false, fmt.Errorf("devnet down: %w", err)
	}
	kc, err := connect(ctx, p.connectTimeout)
	if err != nil {
		return false, fmt.Errorf("devnet down: %w", err)
	}
	_, err = findEnclave(ctx, kc, p.enclave)
	switch {
	case isNoEnclave(err):
		fmt.Fprintf(p.log, "enclave %q not found; nothing to destroy\n", p.enclave)
	case err != nil:
		return false, fmt.Errorf("devnet down: %w", err)
	default:
		if err := destroy(ctx, kc, p.enclave, p.teardownTimeout); err != nil {
			return false, fmt.Errorf("devnet down: %w", err)
		}
		destroyed = true
		fmt.Fprintf(p.log, "enclave %q destroyed\n", p.enclave)
	}
	path := EndpointsPath(p.endpointsDir, p.enclave)
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return destroyed, fmt.Errorf("devnet down: remove %s: %w", path, err)
	}
	return destroyed, nil
}
