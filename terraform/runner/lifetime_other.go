//go:build !linux

package runner

import (
	"errors"
	"syscall"
)

// ProcessContainment is none off Linux: only Linux has cgroups.
func ProcessContainment() Containment {
	return Containment{Mechanism: ContainNone, Reason: "only Linux has cgroups"}
}

type jobCgroup struct{ dir string }

func newJobCgroup(string) (*jobCgroup, error)      { return nil, errors.New("only Linux has cgroups") }
func (c *jobCgroup) procAttr(*syscall.SysProcAttr) {}
func (c *jobCgroup) kill() error                   { return nil }
func (c *jobCgroup) remove() error                 { return nil }
func joinCgroup(string) error                      { return errors.New("only Linux has cgroups") }

// runAsInit always fails off Linux.
func runAsInit(SandboxPolicy, []string) int { return 126 }
