package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"

	"github.com/segdiff/segdiff/clientpatch"
	"github.com/segdiff/segdiff/params"
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
	if len(args) == 0 || args[0] != "check" {
		fmt.Fprintln(stderr, "usage: segdiff params check [--clients client-patches/clients.yaml] FILE...")
		if len(args) > 0 && isHelp(args[0]) {
			return 0
		}
		return 2
	}
	fset := flag.NewFlagSet("params check", flag.ContinueOnError)
	fset.SetOutput(stderr)
	clients := fset.String("clients", clientpatch.DefaultPath, "client-patches manifest that @clients/<name> images refer to")
	if code, ok := parseFlags(fset, args[1:]); !ok {
		return code
	}
	if fset.NArg() == 0 {
		fmt.Fprintln(stderr, "segdiff params check: no files given")
		return 2
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
	for _, path := range fset.Args() {
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
		fmt.Fprintf(stderr, "segdiff params check: %d of %d files have problems\n", failed, fset.NArg())
		return 1
	}
	fmt.Fprintf(stdout, "%d files ok (ethereum-package %s)\n", fset.NArg(), params.EthereumPackageCommit[:7])
	return 0
}
