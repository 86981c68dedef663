package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/segdiff/segdiff/internal/suggest"
)

// Argument handling shared by every subcommand. An argument error is one
// line on stderr, "segdiff <command>: <cause> (see 'segdiff <command>
// --help')", and exit code 2; the whole usage is printed only for --help.

// newFlagSet returns a flag set that prints nothing itself: Parse returns
// flag.ErrHelp for -h/--help and any other problem as an error, which
// parseArgs turns into one line and the command reports (usageError).
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseArgs parses args into fs, with flags before, between or after the
// positional arguments ("--" ends the flags), and returns the positional
// ones. The error is flag.ErrHelp, or one line: an undefined flag names
// the nearest defined one ("did you mean -nodes?"), and a string flag
// given an empty value is an error rather than its default.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, flagError(fs, err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			pos = append(pos, rest...)
			break
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
	var empty []string
	fs.Visit(func(f *flag.Flag) {
		if g, ok := f.Value.(flag.Getter); ok {
			if s, ok := g.Get().(string); ok && s == "" {
				empty = append(empty, "--"+f.Name)
			}
		}
	})
	if len(empty) > 0 {
		return nil, fmt.Errorf("%s given an empty value (give a value, or leave the flag out for its default)", strings.Join(empty, ", "))
	}
	return pos, nil
}

// flagError adds to an undefined-flag error the nearest flag fs defines.
func flagError(fs *flag.FlagSet, err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		msg += suggest.DidYouMean(name, names, "-")
	}
	return errors.New(msg)
}

// usageError reports an argument error of cmd ("sweep compare"; "" for
// segdiff itself) in one line and returns exit code 2.
func usageError(stderr io.Writer, cmd string, err error) int {
	prefix := strings.TrimSpace("segdiff " + cmd)
	fmt.Fprintf(stderr, "%s: %v (see '%s --help')\n", prefix, err, prefix)
	return 2
}

// usageErrorf is usageError with a formatted cause.
func usageErrorf(stderr io.Writer, cmd, format string, a ...any) int {
	return usageError(stderr, cmd, fmt.Errorf(format, a...))
}

// unknownSubcommand reports sub, none of subs, naming the nearest.
func unknownSubcommand(stderr io.Writer, cmd, sub string, subs []string) int {
	return usageErrorf(stderr, cmd, "unknown subcommand %q (one of %s)%s", sub, strings.Join(subs, ", "), suggest.DidYouMean(sub, subs, ""))
}

// printHelp prints synopsis, then fs's flags, to w.
func printHelp(w io.Writer, synopsis string, fs *flag.FlagSet) {
	fmt.Fprint(w, synopsis)
	if !strings.HasSuffix(synopsis, "\n") {
		fmt.Fprintln(w)
	}
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

// parseCommand parses args for cmd. When the command should not go on it
// has printed the help (code 0) or a one-line error (code 2).
func parseCommand(stderr io.Writer, cmd, synopsis string, fs *flag.FlagSet, args []string) (pos []string, code int, ok bool) {
	pos, err := parseArgs(fs, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		printHelp(stderr, synopsis, fs)
		return nil, 0, false
	case err != nil:
		return nil, usageError(stderr, cmd, err), false
	}
	return pos, 0, true
}

// isHelp reports whether arg asks for help.
func isHelp(arg string) bool {
	return arg == "-h" || arg == "--help" || arg == "help" || arg == "-help"
}

// listed is " (a, b)" for the arguments given, or "" for none.
func listed(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return " (" + strings.Join(args, ", ") + ")"
}

// isDirArg checks that an input argument names a directory.
func isDirArg(path string) error {
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return pathCause(err)
	case !fi.IsDir():
		return errors.New("not a directory")
	}
	return nil
}
