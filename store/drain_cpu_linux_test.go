//go:build linux

package store

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU is the CPU time the calling thread has used (user and system):
// the drain benchmark weighs a claim by it beside its wall time, which on a
// loaded host is mostly waiting for a core.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}
