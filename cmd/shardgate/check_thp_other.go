//go:build !linux

package main

// adviseHugeHeap is Linux's transparent huge pages (check_thp_linux.go); other
// systems keep their own page sizes.
func adviseHugeHeap(int64) {}
