package shardgate

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// wallClockAllowed lists every place in shipped code that reads the wall
// clock directly (time.Now, time.Since, time.Until), keyed by file and
// function, with why it may. Every other time-dependent decision takes its
// time from its component's injected clock, which tests fake: a decision
// made on the wall clock beside a fake one holds only until the real
// calendar passes the test's dates. A new call fails this test; so does an
// entry whose call is gone, so the list stays true.
var wallClockAllowed = map[string]string{
	// Clocks themselves: the default when none is injected.
	"coord/coordsim/clock.go:realClock.Now":     "the simulator's default clock",
	"github/ghapp/retry.go:RetryTransport.now":  "the transport's default clock (the service injects its own)",
	"bot/webhook/dispatcher.go:Dispatcher.now":  "the dispatcher's default clock (the service injects its own)",
	"bot/webhook/intake.go:Intake.now":          "the intake's default clock (the service injects its own)",
	"internal/fakeclock/fakeclock.go:Clock.Now": "a Following clock is the real time shifted",
	"internal/fakeclock/fakeclock.go:Following": "a Following clock is the real time shifted",

	// Durations measured for logs and metrics: they decide nothing.
	"bot/webhook/dispatcher.go:Dispatcher.run":       "job duration for the log and metrics",
	"coord/request.go:Client.attempt":                "call duration for the log",
	"coord/coordsim/handler.go:Sim.guard":            "request duration in the simulator's audit",
	"coord/coordsim/audit.go:Sim.buildAudit":         "request duration in the simulator's audit",
	"terraform/runner/exec.go:Job.direct":            "terraform start-up time for the log",
	"bot/server/metrics/observe.go:Metrics.TimePlan": "plan duration histogram",
	"bot/server/listener/admin.go:serveBackup":       "backup duration for the log",
	"bot/plan/planner.go:Planner.PlanPR":             "phase timings for the log",
	"bot/plan/planner.go:Planner.logPhases":          "phase timings for the log",
	"internal/phases/phases.go:Start":                "phase timings for the log",
	"cmd/shardgate-demo/main.go:runDemo":             "the demo's own running time",
	"cmd/shardgate-demo/demo/story.go:world.play":    "the demo's own running time",
	"cmd/shardgate-demo/demo/story.go:since":         "the demo's own running time",
	"cmd/shardgate-bench/main.go:measureAll":         "benchmarks time real processes",
	"cmd/shardgate-bench/measure.go:runOnce":         "benchmarks time real processes",
	"cmd/shardgate-bench/plans.go:preparePlans":      "benchmarks time real processes (how long terraform took to make a plan)",

	// Deadlines of network I/O and of waits on real processes, which the
	// kernel keeps on the real time.
	"bot/webhook/intake_limits.go:bodyGate.read":         "read deadlines of a webhook body",
	"bot/statuspage/pages.go:Handler.render":             "write deadline of a page",
	"bot/statuspage/pages.go:Handler.send":               "write deadline of server-sent events",
	"coord/coordbroker/proxy.go:idleReader.Read":         "idle deadline of a broker tunnel",
	"cmd/shardgate-demo/demo/apply.go:world.followApply": "the demo polls real processes on the real time",
	"cmd/shardgate-demo/demo/apply.go:world.settle":      "the demo polls real processes on the real time",

	// Real-time protocols checked by others on their wall clocks.
	"coord/coordbroker/ca.go:newJobCA": "the broker's TLS certificates, which terraform checks on the wall clock",

	// The command line is the composition root: its clock is the real one.
	"cmd/shardgate/judge.go:judge.evaluate": "`shardgate check`'s attestations are made now",
	"cmd/shardgate/drift.go:runDrift":       "`shardgate drift` reports when it checked",
}

// TestNoWallClockBesideAnInjectedClock lists the direct wall-clock reads of
// shipped code (test support, which fakes clocks, is left out) and fails on
// any the list above does not name.
func TestNoWallClockBesideAnInjectedClock(t *testing.T) {
	found := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && skipDir(path) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				if name, ok := wallClockCall(n); ok {
					key := filepath.ToSlash(path) + ":" + funcName(fd)
					found[key] = append(found[key], fset.Position(n.Pos()).String()+" "+name)
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var unlisted, stale []string
	for key, calls := range found {
		if _, ok := wallClockAllowed[key]; !ok {
			unlisted = append(unlisted, key+": "+strings.Join(calls, ", "))
		}
	}
	for key := range wallClockAllowed {
		if _, ok := found[key]; !ok {
			stale = append(stale, key)
		}
	}
	sort.Strings(unlisted)
	sort.Strings(stale)
	if len(unlisted) > 0 {
		t.Errorf("the wall clock is read beside the component's injected clock (take the time from the clock, or list the call with why in wallClockAllowed):\n  %s",
			strings.Join(unlisted, "\n  "))
	}
	if len(stale) > 0 {
		t.Errorf("wallClockAllowed names places that no longer read the wall clock (remove them): %s", strings.Join(stale, ", "))
	}
}

// skipDir leaves out what is not shipped code: test support packages (they
// fake the clocks), data, and tools' output.
func skipDir(path string) bool {
	base := filepath.Base(path)
	switch {
	case strings.HasPrefix(base, "."), base == "testdata", base == "bin", base == "vendor", base == "node_modules":
		return true
	case strings.HasSuffix(base, "test"), base == "storeopen", filepath.ToSlash(path) == "internal/testing":
		return true
	}
	return false
}

// wallClockCall says whether n calls time.Now, time.Since or time.Until.
func wallClockCall(n ast.Node) (string, bool) {
	call, ok := n.(*ast.CallExpr)
	if !ok {
		return "", false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return "", false
	}
	pkg, ok := sel.X.(*ast.Ident)
	if !ok || pkg.Name != "time" {
		return "", false
	}
	switch sel.Sel.Name {
	case "Now", "Since", "Until":
		return "time." + sel.Sel.Name, true
	}
	return "", false
}

// funcName is Type.Method for a method, the name for a function.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	typ := fd.Recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	if idx, ok := typ.(*ast.IndexExpr); ok {
		typ = idx.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}
