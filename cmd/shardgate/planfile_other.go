//go:build !unix

package main

import "os"

// mapFile maps nothing here: the plan is read instead.
func mapFile(*os.File) ([]byte, func(lo, hi int), func(), error) { return nil, nil, nil, nil }

// dropAhead drops nothing here: nothing is mapped.
func dropAhead([]byte) func(lo, hi int) { return nil }
