package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// The demo is a binary of its own (cmd/shardgate-demo): it wires the fake
// GitHub, which must not ship inside the service. `shardgate demo` runs it
// from beside this binary, where `make demo` builds it.

// demoBinaryName is the demo's binary, looked for in this binary's directory.
const demoBinaryName = "shardgate-demo"

// demoGrace is how long the demo gets to remove its work directory after an
// interrupt before it is killed.
const demoGrace = 10 * time.Second

func init() {
	register("demo", command{
		summary: "play one pull request from denied to applied on loopback (no GitHub account)",
		run:     runDemo,
	})
}

// demoBinary is the shardgate-demo next to this executable; tests replace it.
var demoBinary = func() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	p := filepath.Join(filepath.Dir(self), demoBinaryName)
	if _, err := os.Stat(p); err != nil {
		return "", err
	}
	return p, nil
}

// runDemo runs shardgate-demo with the same arguments and returns its exit
// code, or exits 2 with one line saying how to get it.
func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	bin, err := demoBinary()
	if err != nil {
		return usageError(stderr, "demo", "the demo is the separate binary %s, not found beside this one (%v): run 'make demo', or 'go run ./cmd/shardgate-demo' from the repository", demoBinaryName, err)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	// On SIGINT/SIGTERM the demo gets the interrupt, as from a terminal, and
	// time to clean up.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGINT) }
	cmd.WaitDelay = demoGrace
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &exit) && exit.ExitCode() >= 0:
		return exit.ExitCode()
	default:
		fmt.Fprintf(stderr, "shardgate demo: run %s: %v\n", bin, err)
		return 1
	}
}
