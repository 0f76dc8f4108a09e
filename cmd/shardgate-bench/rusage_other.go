//go:build !unix

package main

import "os"

// maxRSS is unknown where there is no getrusage: the table shows 0.
func maxRSS(*os.ProcessState) int64 { return 0 }
