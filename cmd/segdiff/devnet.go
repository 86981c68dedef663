package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/segdiff/segdiff/internal/clientpatch"
	"github.com/segdiff/segdiff/internal/devnet/kurtosis"
	"github.com/segdiff/segdiff/internal/params"
)

func init() {
	register("devnet", command{
		summary: "Kurtosis devnet lifecycle (devnet up|wait|down|status --enclave NAME)",
		run:     runDevnet,
	})
}

const devnetUsage = `usage:
  segdiff devnet up     --params FILE [--enclave NAME] [--package DIR] [--package-sources DIR] [--clients FILE] [--endpoints-dir DIR]
                        [--privileged] [--fresh] [--progress-slots N] [--stall-slots N] [--chain-timeout D]
  segdiff devnet wait   [--enclave NAME] [--endpoints-dir DIR] [--payload-slots N] [--from-slot S] [--timeout D]
  segdiff devnet down   [--enclave NAME] [--endpoints-dir DIR]
  segdiff devnet status [--enclave NAME] [--endpoints-dir DIR] [--json]
Needs a Kurtosis engine (` + "`kurtosis engine start`" + `, Docker, CLI 1.20.x); see internal/devnet/kurtosis/README.md.
Offline, --package-sources DIR (default $` + kurtosis.EnvPackageSources + `) runs ethereum-package and its imports from the
source archives in DIR, checked against DIR/SHA256SUMS, instead of cloning them from GitHub.`

// runDevnet implements `segdiff devnet up|wait|down|status`. Exit 0 on success,
// 1 on failure, 2 on usage errors.
func runDevnet(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	subs := []string{"up", "wait", "down", "status"}
	if len(args) == 0 {
		return usageErrorf(stderr, "devnet", "no subcommand given (one of %s)", strings.Join(subs, ", "))
	}
	sub, rest := args[0], args[1:]
	fset := newFlagSet("devnet " + sub)
	enclave := fset.String("enclave", kurtosis.DefaultEnclave, "enclave name")
	endpointsDir := fset.String("endpoints-dir", kurtosis.DefaultEndpointsDir, "where <enclave>/endpoints.json lives")
	connectTimeout := fset.Duration("connect-timeout", 10*time.Second, "how long to wait for the Kurtosis engine")
	var (
		paramsFile, pkg, clients, sources *string
		privileged, fresh, asJSON         *bool
		progressSlots, stallSlots         *uint64
		chainTimeout, waitTimeout         *time.Duration
		payloadSlots                      *int
		fromSlot                          *uint64
	)
	switch sub {
	case "up":
		paramsFile = fset.String("params", "", "network-params YAML (required)")
		pkg = fset.String("package", "kurtosis", "local Starlark package directory")
		clients = fset.String("clients", clientpatch.DefaultPath, "client-patches manifest for @clients/<name> images")
		privileged = fset.Bool("privileged", false, "allow privileged containers (implied by segdiff.link_classes)")
		fresh = fset.Bool("fresh", false, "destroy a same-named enclave first instead of re-running in it")
		sources = fset.String("package-sources", os.Getenv(kurtosis.EnvPackageSources),
			"directory of ethereum-package's and its imports' source archives + SHA256SUMS, run instead of cloning from GitHub (default $"+kurtosis.EnvPackageSources+")")
		progressSlots = fset.Uint64("progress-slots", 2, "succeed once every CL's head advanced this many slots (0: return when the package run ends)")
		stallSlots = fset.Uint64("stall-slots", 2, "fail once a CL's head is this many slots behind the wall clock and not advancing")
		chainTimeout = fset.Duration("chain-timeout", 10*time.Minute, "how long to wait for chain progress after the package run")
	case "wait":
		payloadSlots = fset.Int("payload-slots", 3, "consecutive slots in which every CL must report execution_payload_available")
		fromSlot = fset.Uint64("from-slot", 0, "the run of slots starts at this slot or later")
		waitTimeout = fset.Duration("timeout", 15*time.Minute, "how long to wait (Gloas at epoch 1 comes 32 slots after genesis)")
	case "down":
	case "status":
		asJSON = fset.Bool("json", false, "print the endpoints file as JSON instead of tables")
	default:
		if isHelp(sub) {
			fmt.Fprintln(stderr, devnetUsage)
			return 0
		}
		return unknownSubcommand(stderr, "devnet", sub, subs)
	}
	pos, code, ok := parseCommand(stderr, "devnet "+sub, devnetUsage+"\n\nflags of devnet "+sub+":\n", fset, rest)
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return usageErrorf(stderr, "devnet "+sub, "unexpected arguments %q (devnet %s takes flags only)", pos, sub)
	}
	// The SDK logs through logrus; keep its info chatter out of the progress.
	logrus.SetLevel(logrus.WarnLevel)
	common := []kurtosis.Parameter{
		kurtosis.WithEnclave(*enclave),
		kurtosis.WithEndpointsDir(*endpointsDir),
		kurtosis.WithConnectTimeout(*connectTimeout),
		kurtosis.WithLog(stderr),
	}
	var err error
	switch sub {
	case "up":
		if *paramsFile == "" {
			return usageErrorf(stderr, "devnet up", "--params is required: the network-params file of the devnet (network-params/)")
		}
		var e *kurtosis.Endpoints
		e, err = kurtosis.Up(ctx, append(common,
			kurtosis.WithParamsFile(*paramsFile),
			kurtosis.WithPackageDir(*pkg),
			kurtosis.WithManifest(*clients),
			kurtosis.WithParamsCheck(checkParams(*clients)),
			kurtosis.WithAllowPrivilegedMode(*privileged),
			kurtosis.WithFresh(*fresh),
			kurtosis.WithPackageSources(*sources),
			kurtosis.WithProgressSlots(*progressSlots),
			kurtosis.WithStallSlots(*stallSlots),
			kurtosis.WithChainTimeout(*chainTimeout),
		)...)
		if err == nil {
			fmt.Fprintf(stdout, "enclave %s: %d nodes, prometheus %s\nendpoints: %s\n", e.Enclave, len(e.Nodes), e.PrometheusURL,
				kurtosis.EndpointsPath(*endpointsDir, e.Enclave))
		}
	case "wait":
		var e *kurtosis.Endpoints
		e, err = kurtosis.ReadEndpoints(kurtosis.EndpointsPath(*endpointsDir, *enclave))
		if err != nil {
			err = fmt.Errorf("devnet wait: %w", err)
			break
		}
		wctx, cancel := context.WithTimeout(ctx, *waitTimeout)
		var r kurtosis.PayloadRun
		r, err = kurtosis.WaitPayloads(wctx, e, *payloadSlots, *fromSlot, stderr)
		cancel()
		if err == nil {
			fmt.Fprintf(stdout, "enclave %s: execution_payload_available on all %d nodes in slots %d-%d\n", e.Enclave, len(r.Nodes), r.First, r.Last)
		}
	case "down":
		_, err = kurtosis.Down(ctx, common...)
	case "status":
		var st *kurtosis.Status
		st, err = kurtosis.GetStatus(ctx, common...)
		if err == nil {
			if *asJSON {
				if st.Endpoints == nil {
					err = fmt.Errorf("devnet status: enclave %q has no endpoints file in %s (run `segdiff devnet up`)", *enclave, *endpointsDir)
					break
				}
				enc := json.NewEncoder(stdout)
				enc.SetIndent("", "  ")
				err = enc.Encode(st.Endpoints)
			} else {
				st.Print(stdout)
			}
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "segdiff: %v\n", err)
		return 1
	}
	return 0
}

// checkParams is the params checker Up runs first: every problem of the
// file, with the client manifest when there is one.
func checkParams(manifest string) func(path string) error {
	return func(path string) error {
		var opts []params.Option
		m, err := clientpatch.LoadFile(manifest)
		switch {
		case err == nil:
			opts = append(opts, params.WithManifest(m))
		case errors.Is(err, fs.ErrNotExist):
		default:
			return err
		}
		problems, err := params.New(opts...).CheckFile(path)
		if err != nil {
			return err
		}
		if len(problems) > 0 {
			lines := make([]string, len(problems))
			for i, p := range problems {
				lines[i] = "  " + p.String()
			}
			return fmt.Errorf("%d problems (run `make params-check`):\n%s", len(problems), strings.Join(lines, "\n"))
		}
		return nil
	}
}
