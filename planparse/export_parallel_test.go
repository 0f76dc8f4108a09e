package planparse

// ParseParallelBatches is ParseBytesParallel with batches of about batchBytes,
// so that tests can make every entry a batch of its own.
func ParseParallelBatches(b []byte, workers, batchBytes int, done func(lo, hi int)) (*ChangeSet, error) {
	return parseParallel(b, workers, batchBytes, Hints{Done: done})
}

// SplitParse runs the parallel parse alone, with no sequential fallback: tests
// use it to see that a good plan is read in parallel, not silently again in
// sequence.
func SplitParse(b []byte, workers, batchBytes int) (*ChangeSet, error) {
	return splitParse(b, skipSpace(b, 0), workers, newSplit(func(int, int) {}, batchBytes))
}
