package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// newFlagSet returns the demo's FlagSet: it reports errors instead of
// exiting, and --help prints the flags GNU-style (--name), as shardgate's
// other commands do.
func newFlagSet(stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	// The flag package calls Usage on parse errors too; errors stay one line,
	// so the help is printed by parseFlags for --help only.
	fs.Usage = func() {}
	return fs
}

// printHelp writes the synopsis and every flag with its default.
func printHelp(fs *flag.FlagSet, stderr io.Writer) {
	fmt.Fprintf(stderr, "usage: %s\n\nflags:\n", synopsis)
	fs.VisitAll(func(f *flag.Flag) {
		arg, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if arg != "" {
			line += " " + arg
		}
		fmt.Fprintf(stderr, "%s\n      %s", line, usage)
		if f.DefValue != "" && f.DefValue != "false" {
			fmt.Fprintf(stderr, " (default %s)", f.DefValue)
		}
		fmt.Fprintln(stderr)
	})
}

// parseFlags parses args and turns the outcome into an exit code: -1 to go
// on, exitOK after --help, exitUsage with a one-line reason on bad flags.
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) int {
	err := fs.Parse(args)
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
		printHelp(fs, stderr)
		return exitOK
	default:
		fmt.Fprintf(stderr, "shardgate demo: %v (run 'shardgate demo --help')\n", err)
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "shardgate demo: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	return -1
}

// usageError prints a one-line reason for bad usage and returns exitUsage.
func usageError(stderr io.Writer, format string, a ...any) int {
	msg := strings.ReplaceAll(fmt.Sprintf(format, a...), "\n", " ")
	fmt.Fprintf(stderr, "shardgate demo: %s\n", msg)
	return exitUsage
}
