package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"sync"
)

// stringList is a repeatable string flag (--label a --label b).
type stringList []string

func (s *stringList) String() string { return strings.Join(*s, ",") }

func (s *stringList) Set(v string) error {
	*s = append(*s, v)
	return nil
}

// newFlagSet returns a FlagSet that reports errors instead of exiting and prints
// its flags GNU-style (--name), the way the commands are documented.
func newFlagSet(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	// The flag package calls Usage on every parse error too; errors must stay one
	// line, so Usage is silent and parseFlags prints the help only for --help.
	fs.Usage = func() {}
	helpMu.Lock()
	defer helpMu.Unlock()
	helpPrinters[fs] = func() {
		fmt.Fprintf(stderr, "usage: %s\n\nflags:\n", synopsis)
		fs.VisitAll(func(f *flag.Flag) {
			arg, usage := flag.UnquoteUsage(f)
			line := "  --" + f.Name
			if arg != "" {
				line += " " + arg
			}
			fmt.Fprintf(stderr, "%s\n      %s", line, usage)
			if f.DefValue != "" && f.DefValue != "[]" && f.DefValue != "false" {
				fmt.Fprintf(stderr, " (default %s)", f.DefValue)
			}
			fmt.Fprintln(stderr)
		})
	}
	return fs
}

// helpPrinters holds each FlagSet's --help text printer until parseFlags has
// run; commands may run concurrently (tests), hence the lock.
var (
	helpMu       sync.Mutex
	helpPrinters = map[*flag.FlagSet]func(){}
)

func takeHelpPrinter(fs *flag.FlagSet) func() {
	helpMu.Lock()
	defer helpMu.Unlock()
	p := helpPrinters[fs]
	delete(helpPrinters, fs)
	return p
}

// parseFlags parses args and turns the outcome into an exit code: -1 to go on,
// exitOK after --help, exitUsage with a one-line reason on bad flags.
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) int {
	err := fs.Parse(args)
	help := takeHelpPrinter(fs)
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
		if p := help; p != nil {
			p()
		}
		return exitOK
	default:
		fmt.Fprintf(stderr, "shardgate %s: %v (run 'shardgate %s --help')\n", fs.Name(), err, fs.Name())
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "shardgate %s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		return exitUsage
	}
	return -1
}

// usageError prints a one-line reason for bad usage or input and returns exitUsage.
func usageError(stderr io.Writer, cmd string, format string, a ...any) int {
	msg := fmt.Sprintf(format, a...)
	msg = strings.ReplaceAll(msg, "\n", " ")
	fmt.Fprintf(stderr, "shardgate %s: %s\n", cmd, msg)
	return exitUsage
}
