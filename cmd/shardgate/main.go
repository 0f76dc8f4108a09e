// Command shardgate is the policy gate for Terraform changes to Redis Stream
// Coordinator resources. Subcommands: check, plan, coordsim, serve, demo.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"
)

// Exit codes shared by every subcommand.
const (
	exitOK        = 0
	exitDenied    = 1 // the policy denied the plan
	exitFailed    = 1 // a command that judges nothing failed (serve, once serving)
	exitUsage     = 2
	exitTerraform = 3
)

// command is one subcommand. run gets the arguments after the subcommand name and
// returns the process exit code; it never panics on bad input.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) int
	hidden  bool // not listed by help (sandbox.go)
}

// commands is filled by each subcommand's file in init().
var commands = map[string]command{}

func register(name string, c command) { commands[name] = c }

func main() {
	// First: a sandboxed job may have started this binary to confine terraform.
	if code, launched := launchSandboxed(os.Args[1:]); launched {
		os.Exit(code)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := dispatch(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "shardgate: unknown command %q (run 'shardgate help')\n", args[0])
		return exitUsage
	}
	return c.run(ctx, args[1:], stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: shardgate <command> [flags]")
	fmt.Fprintln(w, "")
	names := make([]string, 0, len(commands))
	for n, c := range commands {
		if !c.hidden {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "")
	fmt.Fprintln(w, "Run 'shardgate <command> --help' for a command's flags.")
}
