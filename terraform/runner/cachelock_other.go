//go:build !unix

package runner

import "context"

// lockFile is a no-op where flock is missing: inits of one process are still
// serialised by lockPluginCache, but separate processes must not share a cache.
func lockFile(context.Context, string) (func(), error) { return func() {}, nil }
