package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
)

// compareShape says where two plans differ once what differs from run to run is
// normalised away, "" when they do not: terraform_data's random ids, the
// timestamp, and the groups variable's default in the configuration (examples/
// streams has a three-group default; the synthesizer writes the configuration of
// a root without one).
func compareShape(real, synth []byte) string {
	var a, b any
	if err := json.Unmarshal(real, &a); err != nil {
		return "terraform's plan does not decode: " + err.Error()
	}
	if err := json.Unmarshal(synth, &b); err != nil {
		return "the synthesized plan does not decode: " + err.Error()
	}
	normalise(a)
	normalise(b)
	if keys(a) != keys(b) {
		return fmt.Sprintf("top-level members %s vs %s", keys(a), keys(b))
	}
	return firstDiff("", a, b)
}

func normalise(plan any) {
	m, ok := plan.(map[string]any)
	if !ok {
		return
	}
	m["timestamp"] = "T"
	if vars, ok := dig(m, "configuration", "root_module", "variables", "groups").(map[string]any); ok {
		delete(vars, "default")
	}
	var walk func(any)
	walk = func(x any) {
		switch x := x.(type) {
		case map[string]any:
			for k, e := range x {
				if _, ok := e.(string); ok && k == "id" {
					x[k] = "ID"
					continue
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(m)
}

func dig(x any, path ...string) any {
	for _, p := range path {
		m, ok := x.(map[string]any)
		if !ok {
			return nil
		}
		x = m[p]
	}
	return x
}

// keys are a plan's top-level member names in order of their names (order in the
// file is checked by planparsetest's own test).
func keys(x any) string {
	m, _ := x.(map[string]any)
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return fmt.Sprint(ks)
}

// firstDiff names the first path at which a and b differ.
func firstDiff(path string, a, b any) string {
	if reflect.DeepEqual(a, b) {
		return ""
	}
	switch a := a.(type) {
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok {
			break
		}
		ks := make([]string, 0, len(a))
		for k := range a {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		for _, k := range ks {
			if d := firstDiff(path+"."+k, a[k], bm[k]); d != "" {
				return d
			}
		}
		return fmt.Sprintf("%s: members %s vs %s", path, keys(a), keys(bm))
	case []any:
		bs, ok := b.([]any)
		if !ok || len(a) != len(bs) {
			break
		}
		for i := range a {
			if d := firstDiff(fmt.Sprintf("%s[%d]", path, i), a[i], bs[i]); d != "" {
				return d
			}
		}
	}
	return fmt.Sprintf("%s: %s vs %s", path, short(a), short(b))
}

func short(x any) string {
	b, _ := json.Marshal(x)
	if len(b) > 120 {
		return string(b[:120]) + "…"
	}
	return string(b)
}
