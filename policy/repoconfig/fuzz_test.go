package repoconfig

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"
)

// parseAllocCeiling is what one Parse may allocate, whatever the file: the
// densest YAML of MaxSize takes about 31 MiB.
const parseAllocCeiling = 64 << 20

// aliasBomb is a file whose one anchor of n var_files is aliased by m
// projects: a few kilobytes standing for n*m values.
func aliasBomb(n, m int) string {
	var b strings.Builder
	b.WriteString("version: 1\nprojects:\n  - name: p0\n    dir: d\n    var_files: &v [")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "f%d.tfvars, ", i)
	}
	b.WriteString("x.tfvars]\n")
	for i := 1; i <= m; i++ {
		fmt.Fprintf(&b, "  - {name: p%d, dir: d%d, var_files: *v}\n", i, i)
	}
	return b.String()
}

// FuzzParse: no file crashes the loader or makes it allocate more than
// parseAllocCeiling; a file it accepts has finite numbers and stays within
// yamlstrict's bound on values.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"version: 1\n",
		"version: 1\nprojects:\n  - name: streams\n    dir: streams\n    var_files: [prod.tfvars]\n    apply: manual\n",
		"version: 1\npolicy:\n  max_scale_factor: .nan\n  max_shard_delta: 3\n",
		"version: 1\npolicy: {max_scale_factor: .inf}\n",
		"version: 1\nstreams: {duplicate_tolerant: &s [a, b]}\npolicy: {policy_dirs: *s}\n",
		aliasBomb(300, 300),
		"a0: &a0 [x, x]\na1: &a1 [*a0, *a0]\na2: &a2 [*a1, *a1]\na3: [*a2, *a2]\n",
		"version: 1\n---\nversion: 1\n",
		"version: [1,\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		cfg, err := Parse(FileName, data)
		runtime.ReadMemStats(&after)
		if grew := after.TotalAlloc - before.TotalAlloc; grew > parseAllocCeiling {
			t.Fatalf("Parse of %d bytes allocated %d MiB", len(data), grew>>20)
		}
		var cfgErr *Error
		switch {
		case err != nil && !errors.As(err, &cfgErr):
			t.Fatalf("not a configuration error: %v", err)
		case err != nil && len(cfgErr.Problems) == 0:
			t.Fatalf("a configuration error without a problem")
		case err == nil:
			if f := cfg.Policy.MaxScaleFactor; math.IsNaN(f) || math.IsInf(f, 0) || f < 1 {
				t.Fatalf("accepted max_scale_factor %v", f)
			}
		}
	})
}

// A file of thousands of mistakes says the first 50 and how many more.
func TestErrorSaysAtMostFiftyProblems(t *testing.T) {
	var b strings.Builder
	b.WriteString("version: 1\nprojects:\n")
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&b, "  - {name: p%d, dir: d%d, typo: x}\n", i, i)
	}
	_, err := Parse(FileName, []byte(b.String()))
	var cfgErr *Error
	if !errors.As(err, &cfgErr) || len(cfgErr.Problems) != 3000 {
		t.Fatalf("want 3000 problems, got %v", err)
	}
	if got := strings.Count(err.Error(), "unknown key"); got != 50 {
		t.Fatalf("the error says %d problems", got)
	}
	if !strings.HasSuffix(err.Error(), "; and 2950 more problems") {
		t.Fatalf("the error does not say how many more: ...%s", err.Error()[len(err.Error())-80:])
	}
}

// The loader refuses what once took a server's memory or judged a pull
// request with no bound at all.
func TestParseRefusesHostileFiles(t *testing.T) {
	for _, tt := range []struct{ name, yaml, want string }{
		{"alias bomb", aliasBomb(2000, 3000), "29:38: alias *v expands the document past 50000 values"},
		{"nan threshold", "version: 1\npolicy:\n  max_scale_factor: .nan\n", `3:21: policy.max_scale_factor: want a finite number, got ".nan"`},
		{"infinite threshold", "version: 1\npolicy:\n  max_scale_factor: .inf\n", `3:21: policy.max_scale_factor: want a finite number, got ".inf"`},
		{"too large", "version: 1\n#" + strings.Repeat("x", MaxSize), "file is larger than 262144 bytes"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := Parse(FileName, []byte(tt.yaml))
			runtime.ReadMemStats(&after)
			var cfgErr *Error
			if !errors.As(err, &cfgErr) {
				t.Fatalf("want a configuration error, got %v", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %q does not say %q", err, tt.want)
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > parseAllocCeiling {
				t.Fatalf("Parse allocated %d MiB", grew>>20)
			}
		})
	}
}
