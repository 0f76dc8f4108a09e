//go:build !linux

package runner

import (
	"errors"
	"os/exec"
)

var errNoLandlock = errors.New("the terraform sandbox uses Landlock, which only Linux has")

// SandboxSupported says whether this system can confine terraform: never,
// off Linux.
func SandboxSupported() error { return errNoLandlock }

// LandlockABI is 0: only Linux has Landlock.
func LandlockABI() int { return 0 }

// ExecSandboxed always fails off Linux.
func ExecSandboxed(SandboxPolicy, []string) error { return errNoLandlock }

// SandboxConnectSupported always fails off Linux.
func SandboxConnectSupported() error { return errNoLandlock }

var errNoThreadFS = errors.New("sandbox: a thread of its own needs Linux")

// runConfined always fails off Linux.
func runConfined(SandboxPolicy, []string, *exec.Cmd, func()) error { return errNoLandlock }
