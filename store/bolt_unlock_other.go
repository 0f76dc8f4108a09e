//go:build !unix

package store

import "os"

// unlockFile has nothing to add to closing the file where bbolt does not use
// flock.
func unlockFile(*os.File) {}
