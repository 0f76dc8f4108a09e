package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/shardgate/shardgate/planparse/planparsetest"
)

// The plans of the benchmark: N stream-group instances, 10 groups per stream
// prefix, 10% of the prefixes scaled by +2 shards.
const (
	scaledPercent  = 10
	removedPercent = 1 // denied plans only
)

// Cases. A denied plan also removes 1% of the instances and attests nothing:
// every scaled stream lacks its quiesce attestation and every removal unmanages a
// group. An allowed plan removes nothing and attests every scaled stream.
const (
	caseDenied  = "denied"
	caseAllowed = "allowed"
	caseHeavy   = "heavy"
)

// shapes are the cases every size is measured on. The heavy case is the denied
// one with mixed deltas (see heavyInstances): a plan of many changes and many
// violations, the shape users' large plans have and the others lack.
var shapes = []string{caseDenied, caseAllowed, caseHeavy,
	soloPrefix + caseDenied, soloPrefix + caseAllowed, soloPrefix + caseHeavy}

// planCase is one plan file to judge and what to tell the tools about it.
type planCase struct {
	size    int
	name    string // caseDenied or caseAllowed
	path    string
	bytes   int64
	source  string   // where the plan came from, for the table
	attest  []string // stream prefixes attested (allowed plans: every scaled one)
	data    string   // conftest --data file with the same attestations, "" for none
	allowed bool     // the decision both tools must reach
}

// instances are the module instances of a case's plan, before and after.
func instances(size int, name string) []planparsetest.Instance {
	if base, ok := soloCase(name); ok {
		return soloInstances(size, base)
	}
	switch name {
	case caseHeavy:
		return heavyInstances(size)
	case caseDenied:
		return planparsetest.Instances(size, scaledPercent, removedPercent)
	}
	return planparsetest.Instances(size, scaledPercent, 0)
}

// heavyDelta turns the k-th scaled prefix's shard count (4 to 10 before) into its
// count after, in turn: +2 and -2 within the limits, +6 beyond max_shard_delta
// (and beyond max_scale_factor from 4), and ×3 beyond both.
func heavyDelta(k, before int) int {
	switch k % 4 {
	case 0:
		return before + 2
	case 1:
		return before - 2
	case 2:
		return before + 6
	}
	return before * 3
}

// heavyInstances are the denied case's instances (10% of the prefixes scaled, 1%
// of the instances removed, nothing attested) with mixed deltas, every group of a
// prefix scaled alike.
func heavyInstances(size int) []planparsetest.Instance {
	ins := planparsetest.Instances(size, scaledPercent, removedPercent)
	k := -1
	last := ""
	for i, in := range ins {
		if in.Removed || in.ShardsAfter == in.ShardsBefore {
			continue
		}
		if in.StreamPrefix != last {
			k, last = k+1, in.StreamPrefix
		}
		ins[i].ShardsAfter = heavyDelta(k, in.ShardsBefore)
	}
	return ins
}

// scaledPrefixes are the stream prefixes whose count the plan changes.
func scaledPrefixes(ins []planparsetest.Instance) []string {
	var out []string
	for _, in := range ins {
		if !in.Removed && in.ShardsAfter != in.ShardsBefore && !slices.Contains(out, in.StreamPrefix) {
			out = append(out, in.StreamPrefix)
		}
	}
	return out
}

// newCase fills in what both tools are told for a plan already at path.
func newCase(cache string, size int, name, path, source string) (planCase, error) {
	st, err := os.Stat(path)
	if err != nil {
		return planCase{}, fmt.Errorf("stat plan: %w", err)
	}
	base, _ := soloCase(name) // name itself when it is not a solo case
	allowed := base == caseAllowed
	c := planCase{size: size, name: name, path: path, bytes: st.Size(), source: source, allowed: allowed}
	if !allowed {
		return c, nil
	}
	c.attest = scaledPrefixes(instances(size, name))
	attested := map[string]bool{}
	for _, p := range c.attest {
		attested[p] = true
	}
	b, err := json.Marshal(map[string]any{"attested_streams": attested})
	if err != nil {
		return planCase{}, fmt.Errorf("encode conftest data: %w", err)
	}
	c.data = filepath.Join(cache, fmt.Sprintf("attested-%d-%s.json", size, name))
	if err := os.WriteFile(c.data, b, 0o644); err != nil {
		return planCase{}, fmt.Errorf("write conftest data: %w", err)
	}
	return c, nil
}

// synthesized writes (or finds in the cache) the plan planparsetest.Render makes
// for a case: the JSON terraform 1.5.7 writes for examples/streams, byte for byte
// in shape (planparsetest's TestRenderMatchesTerraform, and this benchmark's own
// comparison at the sizes it runs terraform for). The cache key is a hash of the
// generator's source, so a changed generator writes new plans.
func synthesized(cache, repo string, size int, name string) (planCase, error) {
	key, err := generatorKey(repo)
	if err != nil {
		return planCase{}, err
	}
	path := filepath.Join(cache, fmt.Sprintf("synth-%d-%s-%s.json", size, name, key))
	if _, err := os.Stat(path); err != nil {
		if err := removeStale(cache, fmt.Sprintf("synth-%d-%s-*.json", size, name)); err != nil {
			return planCase{}, err
		}
		if err := writeAtomic(path, planparsetest.Render(instances(size, name))); err != nil {
			return planCase{}, err
		}
	}
	return newCase(cache, size, name, path, "synthesized")
}

// generatorKey hashes planparsetest's non-test sources.
func generatorKey(repo string) (string, error) {
	files, err := filepath.Glob(filepath.Join(repo, "planparse", "planparsetest", "*.go"))
	if err != nil || len(files) == 0 {
		return "", fmt.Errorf("find planparsetest sources in %s: %v", repo, err)
	}
	h := sha256.New()
	for _, f := range files {
		if filepath.Ext(f) == ".go" && !isTest(f) {
			b, err := os.ReadFile(f)
			if err != nil {
				return "", fmt.Errorf("read generator source: %w", err)
			}
			h.Write(b)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

func isTest(path string) bool {
	m, _ := filepath.Match("*_test.go", filepath.Base(path))
	return m
}

func removeStale(dir, pattern string) error {
	old, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		return fmt.Errorf("find stale plans: %w", err)
	}
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return fmt.Errorf("remove stale plan: %w", err)
		}
	}
	return nil
}

// writeAtomic writes b to path through a temporary file, so an interrupted run
// never leaves a truncated plan in the cache.
func writeAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("write plan: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write plan: %w", err)
	}
	return nil
}

// preparePlans returns the denied and allowed case of every size: from the real
// terraform up to o.realMax instances, synthesized above.
func preparePlans(ctx context.Context, o options, log func(string, ...any)) ([]planCase, []string, error) {
	var cases []planCase
	var notes []string
	for _, size := range o.sizes {
		for _, name := range shapes {
			var c planCase
			var err error
			_, solo := soloCase(name)
			if size <= o.realMax || solo && size <= o.soloRealMax {
				log("plan: %d instances, %s, with terraform", size, name)
				var note string
				start := time.Now()
				c, note, err = realPlan(ctx, o, size, name)
				log("plan: %d instances, %s: %.1f s (state written, init, plan, show -json; or the cache)", size, name, time.Since(start).Seconds())
				if note != "" {
					notes = append(notes, note)
				}
			} else {
				log("plan: %d instances, %s, synthesized", size, name)
				c, err = synthesized(o.cache, o.repo, size, name)
			}
			if err != nil {
				return nil, nil, err
			}
			cases = append(cases, c)
		}
	}
	return cases, notes, nil
}
