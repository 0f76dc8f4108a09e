package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/shardgate/shardgate/policy/repoconfig"
)

func init() {
	register("config", command{summary: "translate another tool's repository configuration (config from-atlantis [atlantis.yaml])", run: runConfig})
}

const configSynopsis = "shardgate config from-atlantis [FILE]   (FILE defaults to atlantis.yaml)"

// runConfig prints a .shardgate.yaml translated from an atlantis.yaml on
// stdout; what it could not carry over is in it as comments, and listed on
// stderr. Exit 0, or 2 with a one-line reason.
func runConfig(_ context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintln(stderr, "usage: "+configSynopsis)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	if args[0] != "from-atlantis" {
		return usageError(stderr, "config", "unknown subcommand %q (want from-atlantis)", args[0])
	}
	file := "atlantis.yaml"
	switch rest := args[1:]; {
	case len(rest) == 1:
		file = rest[0]
	case len(rest) > 1:
		return usageError(stderr, "config from-atlantis", "one file at most, got %d (usage: %s)", len(rest), configSynopsis)
	}
	data, err := os.ReadFile(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return usageError(stderr, "config from-atlantis", "%s does not exist", file)
	case err != nil:
		return usageError(stderr, "config from-atlantis", "read %s: %v", file, err)
	}
	out, notes, err := repoconfig.FromAtlantis(file, data)
	if err != nil {
		return usageError(stderr, "config from-atlantis", "%v", err)
	}
	if _, err := stdout.Write(out); err != nil {
		return usageError(stderr, "config from-atlantis", "write: %v", err)
	}
	for _, n := range notes {
		fmt.Fprintln(stderr, "not carried over: "+n)
	}
	return exitOK
}
