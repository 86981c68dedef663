package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/segdiff/segdiff/internal/clientpatch"
	"github.com/segdiff/segdiff/internal/params"
)

func init() {
	register("params", command{
		summary: "check network-params files against the pinned ethereum-package (params check FILE...)",
		run:     runParams,
	})
}

// runParams implements `segdiff params check [--clients FILE] FILE...`:
// every problem of every file, sorted, one per line; exit 1 when any.
func runParams(_ context.Context, args []string, stdout, stderr io.Writer) int {
	const synopsis = "usage: segdiff params check [--clients client-patches/clients.yaml] FILE...\n\nflags:\n"
	fset := newFlagSet("params check")
	clients := fset.String("clients", clientpatch.DefaultPath, "client-patches manifest that @clients/<name> images refer to")
	switch {
	case len(args) == 0:
		return usageErrorf(stderr, "params", "no subcommand given (params has one: check)")
	case isHelp(args[0]):
		printHelp(stderr, synopsis, fset)
		return 0
	case args[0] != "check":
		return unknownSubcommand(stderr, "params", args[0], []string{"check"})
	}
	files, code, ok := parseCommand(stderr, "params check", synopsis, fset, args[1:])
	if !ok {
		return code
	}
	if len(files) == 0 {
		return usageErrorf(stderr, "params check", "no files given")
	}
	var opts []params.Option
	m, err := clientpatch.LoadFile(*clients)
	switch {
	case err == nil:
		opts = append(opts, params.WithManifest(m))
	case errors.Is(err, fs.ErrNotExist):
		// Without a manifest, @clients/ references are reported per use.
		fmt.Fprintf(stderr, "segdiff params check: %s not found; @clients/ images cannot be checked\n", *clients)
	default:
		fmt.Fprintf(stderr, "segdiff params check: %v\n", err)
		return 1
	}
	checker := params.New(opts...)
	failed := 0
	for _, path := range files {
		problems, err := checker.CheckFile(path)
		if err != nil {
			fmt.Fprintf(stderr, "segdiff params check: %v\n", err)
			failed++
			continue
		}
		for _, p := range problems {
			fmt.Fprintln(stdout, p)
		}
		if len(problems) > 0 {
			failed++
		}
	}
	if failed > 0 {
		fmt.Fprintf(stderr, "segdiff params check: %d of %d files have problems\n", failed, len(files))
		return 1
	}
	fmt.Fprintf(stdout, "%d files ok (ethereum-package %s)\n", len(files), params.EthereumPackageCommit[:7])
	return 0
}
