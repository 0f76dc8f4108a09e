//go:build linux

package runner

import "syscall"

// sysProcAttr matches tfexec: terraform gets its own process group, so a
// Ctrl-C at the terminal reaches shardgate (which then interrupts terraform
// once, through the context) rather than terraform directly; and terraform
// dies if shardgate does.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
