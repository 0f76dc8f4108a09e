package shardgate_test

import (
	"os"
	"os/exec"
	"path"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/shardgate/shardgate"

// The folders form layers (docs/design.md): inside every folder, the graph of
// its sub-folders — A → B when a package under A imports one under B — has no
// cycle, so no folder imports one above it. At the top that is the graph of
// the top-level folders; one level down, the folders inside each of them; and
// so on down. The package a folder holds itself counts as its own node (".").
// Only the shipped imports count: a test may import any test support.
func TestFoldersFormLayers(t *testing.T) {
	edges := folderEdges(t, goListImports(t))
	for _, parent := range sortedKeys(edges) {
		if cycle := findCycle(edges[parent]); cycle != nil {
			var why []string
			for i := 0; i+1 < len(cycle); i++ {
				e := edges[parent][cycle[i]][cycle[i+1]]
				why = append(why, e[0]+" imports "+e[1])
			}
			t.Errorf("inside %q the folders import in a circle %s:\n  %s",
				parent, strings.Join(cycle, " → "), strings.Join(why, "\n  "))
		}
	}
}

// The top level holds the design card's folders and at most ten folders of Go
// code in all; no test double sits in a product folder.
func TestTopLevelFolders(t *testing.T) {
	top := map[string]bool{}
	for pkg := range goListImports(t) {
		dir := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
		if dir == "" {
			continue // fixtures.go: the embedded files, at the root
		}
		top[strings.Split(dir, "/")[0]] = true
		for _, part := range strings.Split(dir, "/") {
			if part == "githubtest" || strings.HasPrefix(part, "fake") {
				require.True(t, strings.HasPrefix(dir, "internal/"), "%s: a test double outside internal/", dir)
			}
		}
	}
	require.LessOrEqual(t, len(top), 10, "top-level folders of Go code: %v", sortedKeys(top))
	for _, want := range []string{"cmd", "bot", "policy", "planparse", "coord", "rego"} {
		require.True(t, top[want], "the design card's folder %s/ holds Go code", want)
	}
}

// The README's Layout table names every folder that holds Go code.
func TestReadmeLayoutNamesEveryFolder(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	_, layout, ok := strings.Cut(string(readme), "\n## Layout\n")
	require.True(t, ok, "README.md has a Layout section")
	layout, _, _ = strings.Cut(layout, "\n## ")
	for _, pkg := range sortedKeys(goListImports(t)) {
		dir := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
		if dir == "" {
			continue
		}
		require.True(t, strings.Contains(layout, "`"+dir+"`") || strings.Contains(layout, "`"+dir+"/`"),
			"README.md's Layout table does not name %s/", dir)
	}
}

// goListImports maps each package of the module to the packages of the module
// it imports (non-test files only).
func goListImports(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...").Output()
	if ee, ok := err.(*exec.ExitError); ok {
		t.Fatalf("go list: %v\n%s", err, ee.Stderr)
	}
	require.NoError(t, err)
	pkgs := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkgs[f[0]] = nil
		for _, imp := range f[1:] {
			if imp == module || strings.HasPrefix(imp, module+"/") {
				pkgs[f[0]] = append(pkgs[f[0]], imp)
			}
		}
	}
	require.NotEmpty(t, pkgs)
	return pkgs
}

// folderEdges groups the imports by the folder where importer and imported
// part: parent → child A → child B → one example (importer, imported).
func folderEdges(t *testing.T, pkgs map[string][]string) map[string]map[string]map[string][2]string {
	t.Helper()
	edges := map[string]map[string]map[string][2]string{}
	for from, imps := range pkgs {
		for _, to := range imps {
			a, b := segments(from), segments(to)
			i := 0
			for i < len(a) && i < len(b) && a[i] == b[i] {
				i++
			}
			parent, ca, cb := path.Join(append([]string{"."}, a[:i]...)...), child(a, i), child(b, i)
			if edges[parent] == nil {
				edges[parent] = map[string]map[string][2]string{}
			}
			if edges[parent][ca] == nil {
				edges[parent][ca] = map[string][2]string{}
			}
			if _, ok := edges[parent][ca][cb]; !ok {
				edges[parent][ca][cb] = [2]string{from, to}
			}
		}
	}
	return edges
}

func segments(pkg string) []string {
	rel := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
	if rel == "" {
		return nil
	}
	return strings.Split(rel, "/")
}

// child is the folder below the common parent that holds the package, or "."
// when the package is the parent folder's own.
func child(segs []string, i int) string {
	if i < len(segs) {
		return segs[i]
	}
	return "."
}

// findCycle returns one cycle of the graph as its nodes, the first repeated
// at the end, or nil.
func findCycle[V any](g map[string]map[string]V) []string {
	const (
		unseen = iota
		open
		done
	)
	state := map[string]int{}
	var stack []string
	var visit func(n string) []string
	visit = func(n string) []string {
		state[n] = open
		stack = append(stack, n)
		for _, m := range sortedKeys(g[n]) {
			switch state[m] {
			case open:
				for i, s := range stack {
					if s == m {
						return append(append([]string{}, stack[i:]...), m)
					}
				}
			case unseen:
				if c := visit(m); c != nil {
					return c
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[n] = done
		return nil
	}
	for _, n := range sortedKeys(g) {
		if state[n] == unseen {
			if c := visit(n); c != nil {
				return c
			}
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
