//go:build unix

package main

import (
	"os"
	"runtime"
	"syscall"
)

// maxRSS is the process's peak resident set in bytes: ru_maxrss, which Linux
// counts in KiB and macOS in bytes.
func maxRSS(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return ru.Maxrss
	}
	return ru.Maxrss * 1024
}
