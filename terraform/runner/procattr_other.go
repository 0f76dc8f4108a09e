//go:build !linux

package runner

import "syscall"

func sysProcAttr() *syscall.SysProcAttr { return nil }
