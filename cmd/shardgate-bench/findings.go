package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// finding is one violation as both tools report it: which rule, which stream, which
// address ("" for a finding about a whole stream). Messages are worded differently
// and are not compared.
type finding struct {
	Rule         string `json:"rule"`
	StreamPrefix string `json:"stream_prefix"`
	Address      string `json:"address"`
}

func (f finding) String() string {
	return f.Rule + " " + f.StreamPrefix + " " + f.Address
}

// shardgateFindings reads `shardgate check --format json` output.
func shardgateFindings(out []byte) (allowed bool, fs []finding, err error) {
	var rep struct {
		Allowed    *bool     `json:"allowed"`
		Violations []finding `json:"violations"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		return false, nil, fmt.Errorf("decode shardgate report: %w", err)
	}
	if rep.Allowed == nil {
		return false, nil, fmt.Errorf("decode shardgate report: no \"allowed\"")
	}
	return *rep.Allowed, sorted(rep.Violations), nil
}

// conftestFindings reads `conftest test --output json` output for one file: the
// policy puts rule, stream_prefix and address beside msg, which conftest reports
// as metadata.
func conftestFindings(out []byte) ([]finding, error) {
	var results []struct {
		Filename string `json:"filename"`
		Failures []struct {
			Metadata finding `json:"metadata"`
		} `json:"failures"`
	}
	if err := json.Unmarshal(out, &results); err != nil {
		return nil, fmt.Errorf("decode conftest results: %w", err)
	}
	if len(results) != 1 {
		return nil, fmt.Errorf("decode conftest results: want one file's results, got %d", len(results))
	}
	fs := make([]finding, 0, len(results[0].Failures))
	for _, f := range results[0].Failures {
		fs = append(fs, f.Metadata)
	}
	return sorted(fs), nil
}

func sorted(fs []finding) []finding {
	if fs == nil {
		fs = []finding{}
	}
	slices.SortFunc(fs, func(a, b finding) int { return strings.Compare(a.String(), b.String()) })
	return fs
}

// sameFindings says how two sorted finding lists differ, "" when they do not.
func sameFindings(shardgate, conftest []finding) string {
	if slices.Equal(shardgate, conftest) {
		return ""
	}
	var onlyS, onlyC []string
	for _, f := range shardgate {
		if !slices.Contains(conftest, f) {
			onlyS = append(onlyS, f.String())
		}
	}
	for _, f := range conftest {
		if !slices.Contains(shardgate, f) {
			onlyC = append(onlyC, f.String())
		}
	}
	return fmt.Sprintf("%d findings from shardgate, %d from conftest; only shardgate: %s; only conftest: %s",
		len(shardgate), len(conftest), firstFew(onlyS), firstFew(onlyC))
}

func firstFew(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	if len(s) > 3 {
		return strings.Join(s[:3], "; ") + fmt.Sprintf(" and %d more", len(s)-3)
	}
	return strings.Join(s, "; ")
}

// countByRule is "no_destroy 500, quiesce_attestation 500" for the table.
func countByRule(fs []finding) string {
	n := map[string]int{}
	var rules []string
	for _, f := range fs {
		if n[f.Rule] == 0 {
			rules = append(rules, f.Rule)
		}
		n[f.Rule]++
	}
	slices.Sort(rules)
	parts := make([]string, 0, len(rules))
	for _, r := range rules {
		parts = append(parts, fmt.Sprintf("%s %d", r, n[r]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
