//go:build !unix

package planparse_test

import "time"

// processCPU is not measured here; the cpu-ms/op metric then reads 0.
func processCPU() time.Duration { return 0 }
