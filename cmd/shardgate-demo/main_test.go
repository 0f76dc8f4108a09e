package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/terraform/runner"
)

// TestMain lets the test binary confine terraform as shardgate-demo does:
// the demo's service re-executes os.Executable() as the sandbox launcher.
func TestMain(m *testing.M) {
	if code, launched := runner.RunSandboxLauncher(os.Args[1:]); launched {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

func TestDemoUsage(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{name: "help lists every flag", args: []string{"--help"}, wantCode: exitOK, wantErr: "--apply-timeout"},
		{name: "unknown flag", args: []string{"--nope"}, wantCode: exitUsage, wantErr: "flag provided but not defined"},
		{name: "unknown stopping point", args: []string{"--until", "merged"}, wantCode: exitUsage, wantErr: `--until must be allowed or applied, got "merged"`},
		{name: "bad apply timeout", args: []string{"--apply-timeout", "0s"}, wantCode: exitUsage, wantErr: "--apply-timeout must be positive"},
		{name: "stray argument", args: []string{"now"}, wantCode: exitUsage, wantErr: `unexpected argument "now"`},
		{name: "module missing", args: []string{"--module", "no/such/module"}, wantCode: 1, wantErr: "the example module no/such/module is missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := runDemo(context.Background(), tt.args, &stdout, &stderr)
			require.Equal(t, tt.wantCode, code, stderr.String())
			require.Contains(t, stderr.String(), tt.wantErr)
			if tt.wantCode != exitOK {
				require.Equal(t, 1, strings.Count(strings.TrimSpace(stderr.String()), "\n")+1, "one line: %q", stderr.String())
			} else {
				for _, f := range []string{"--terraform", "--module", "--until", "--keep", "--quiet", "--log"} {
					require.Contains(t, stderr.String(), f)
				}
			}
		})
	}
}
