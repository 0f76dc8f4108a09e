//go:build !linux

package store

import "time"

// threadCPU is not read here: the drain benchmark reports wall time only.
func threadCPU() time.Duration { return 0 }
