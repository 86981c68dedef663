//go:debug randseednop=0

// Command segdiff runs the segdiff tools: the embedded devnet simulator, the
// Kurtosis devnet lifecycle, the network-params checker and the client-patch
// tooling. Each subcommand lives in its own file and registers itself here;
// main only dispatches.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"github.com/segdiff/segdiff/internal/suggest"
)

// command is one subcommand. run gets the arguments after the subcommand's
// name and returns the process exit code; usage errors return 2.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) int
	// hidden keeps a diagnostic out of the usage; it still runs.
	hidden bool
}

var commands = map[string]command{}

func register(name string, c command) {
	if _, dup := commands[name]; dup {
		panic("segdiff: command registered twice: " + name)
	}
	commands[name] = c
}

// commandNames lists the commands, sorted.
func commandNames() []string {
	names := make([]string, 0, len(commands))
	for n, c := range commands {
		if c.hidden {
			continue
		}
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: segdiff <command> [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	for _, n := range commandNames() {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\n'segdiff <command> --help' describes a command's flags.")
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	names := commandNames()
	switch {
	case len(args) == 0:
		return usageErrorf(stderr, "", "no command given (one of %s)", strings.Join(names, ", "))
	case isHelp(args[0]):
		usage(stderr)
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		return usageErrorf(stderr, "", "unknown command %q (one of %s)%s", args[0], strings.Join(names, ", "), suggest.DidYouMean(args[0], names, ""))
	}
	// Ctrl-C cancels the context; commands clean up and return.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return c.run(ctx, args[1:], stdout, stderr)
}
