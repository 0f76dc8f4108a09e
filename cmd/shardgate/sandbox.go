package main

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"

	"github.com/shardgate/shardgate/terraform/runner"
)

// shardgate confines the terraform of pull requests by re-executing itself
// (runner.WithSandbox): jobs start this binary with terraform's arguments
// and the policy in runner.SandboxEnv, and main hands over to the launcher
// before anything else runs. __sandbox-exec is the same confinement for a
// person checking what it allows on a host; both are hidden from help.

func init() {
	register("__sandbox-exec", command{hidden: true, run: runSandboxExec})
}

const sandboxExecSynopsis = "shardgate __sandbox-exec [--rw PATH]... [--ro PATH]... [--plugin-cache DIR] -- PROGRAM [ARG]..."

// launchSandboxed makes this process the sandbox launcher when a job
// started it as one; it returns only when it did not (or failed).
func launchSandboxed(args []string) (code int, launched bool) {
	return runner.RunSandboxLauncher(args)
}

// runSandboxExec runs PROGRAM confined to the system paths of every sandbox
// and the paths given. It returns only on failure (exit 126, or 2 for bad
// usage); otherwise the program replaces shardgate.
func runSandboxExec(_ context.Context, args []string, _, stderr io.Writer) int {
	fs := newFlagSet("__sandbox-exec", sandboxExecSynopsis, stderr)
	var rw, ro stringList
	fs.Var(&rw, "rw", "a file or directory the program may read and write (repeatable)")
	fs.Var(&ro, "ro", "a file or directory the program may read (repeatable)")
	cache := fs.String("plugin-cache", "", "a plugin cache, writable when the program's first argument is init")
	i := slices.Index(args, "--")
	if i < 0 {
		i = len(args)
	}
	if code := parseFlags(fs, args[:i], stderr); code >= 0 {
		return code
	}
	command := args[min(i+1, len(args)):]
	if len(command) == 0 {
		return usageError(stderr, "__sandbox-exec", "give the program after the flags: -- PROGRAM [ARG]...")
	}
	prog, err := exec.LookPath(command[0])
	if err == nil {
		prog, err = filepath.Abs(prog)
	}
	if err != nil {
		return usageError(stderr, "__sandbox-exec", "%v", err)
	}
	p := runner.SandboxPolicy{Exec: prog, PluginCache: *cache,
		ReadWrite: slices.Concat(absAll(rw), runner.SystemReadWrite),
		ReadOnly:  slices.Concat(runner.SystemReadOnly, absAll(ro))}
	err = runner.ExecSandboxed(p, command[1:])
	fmt.Fprintf(stderr, "shardgate __sandbox-exec: %v\n", err)
	return 126
}

func absAll(paths []string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if a, err := filepath.Abs(p); err == nil {
			p = a
		}
		out = append(out, p)
	}
	return out
}
