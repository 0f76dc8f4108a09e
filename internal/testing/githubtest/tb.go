package githubtest

// TB is the part of testing.TB the fake uses. *testing.T and *testing.B
// satisfy it; a program driving the fake (shardgate demo) brings its own.
//
// As with testing, Fatalf must not return to its caller: the fake assumes
// the work it asked for happened once Fatalf is past. Errorf may be called
// from the fake's HTTP handler goroutines.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Logf(format string, args ...any)
	Cleanup(func())
	TempDir() string
}
