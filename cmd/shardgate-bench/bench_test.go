package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/planparse/planparsetest"
)

// The outputs in testdata are the real tools' on planparsetest.GeneratePlan(20, 50,
// 10): `shardgate check --format json` and `conftest test --policy cmd/shardgate-bench/policy
// --output json`. Both read as the same findings.
func TestOutputsOfBothToolsReadAlike(t *testing.T) {
	rawS, err := os.ReadFile(filepath.Join("testdata", "shardgate-denied-20.json"))
	require.NoError(t, err)
	rawC, err := os.ReadFile(filepath.Join("testdata", "conftest-denied-20.json"))
	require.NoError(t, err)
	allowed, fs, err := shardgateFindings(rawS)
	require.NoError(t, err)
	require.False(t, allowed)
	fc, err := conftestFindings(rawC)
	require.NoError(t, err)
	require.Empty(t, sameFindings(fs, fc))
	require.Equal(t, "no_destroy 2, quiesce_attestation 1", countByRule(fs))

	t.Run("a difference is named", func(t *testing.T) {
		d := sameFindings(fs, fc[1:])
		require.Contains(t, d, "3 findings from shardgate, 2 from conftest; only shardgate: "+fc[0].String()+"; only conftest: none")
	})
	t.Run("not a report", func(t *testing.T) {
		_, _, err := shardgateFindings([]byte(`{"violations":[]}`))
		require.ErrorContains(t, err, `no "allowed"`)
		_, err = conftestFindings([]byte(`[]`))
		require.ErrorContains(t, err, "want one file's results, got 0")
	})
}

func TestCompareShape(t *testing.T) {
	ins := planparsetest.Instances(30, 10, 5)
	plan := planparsetest.Render(ins)
	tests := []struct {
		name  string
		other []byte
		want  string
	}{
		{name: "same plan", other: plan},
		{name: "other ids and timestamp", other: bytes.ReplaceAll(
			bytes.ReplaceAll(plan, []byte(`"2026-01-01T00:00:00Z"`), []byte(`"2027-02-02T00:00:00Z"`)),
			[]byte(`"id":"`), []byte(`"id":"x`))},
		{name: "another shard count", other: bytes.Replace(plan, []byte(`"shard_count":4,`), []byte(`"shard_count":5,`), 1),
			want: ".variables.groups.value.stream-00000/group-000.shard_count: 5 vs 4"},
		{name: "a member more", other: bytes.Replace(plan, []byte(`{"format_version"`), []byte(`{"errored":false,"format_version"`), 1),
			want: "top-level members"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := compareShape(tt.other, plan)
			if tt.want == "" {
				require.Empty(t, got)
				return
			}
			require.Contains(t, got, tt.want)
		})
	}
}

func TestMedian(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, n := range v {
			out[i] = time.Duration(n) * time.Millisecond
		}
		return out
	}
	require.Equal(t, 30*time.Millisecond, median(ms(50, 10, 30)))
	require.Equal(t, 25*time.Millisecond, median(ms(40, 10, 20, 30)))
	require.Zero(t, median(nil))
	s := summarise([]sample{{wall: 3 * time.Second, cpu: 5, user: 4, sys: 1, maxRSS: 10}, {wall: time.Second, cpu: 1, user: 1, sys: 0, maxRSS: 30}, {wall: 2 * time.Second, cpu: 2, user: 1, sys: 1, maxRSS: 20}})
	require.Equal(t, stats{runs: 3, median: 2 * time.Second, fastest: time.Second, cpu: 2, user: 1, sys: 1, peak: 30}, s)
	require.Equal(t, stats{}, summarise(nil))
}

func TestThousands(t *testing.T) {
	require.Equal(t, "1,000", thousands(1000))
	require.Equal(t, "50,000", thousands(50000))
	require.Equal(t, "100", thousands(100))
	require.Equal(t, "1,234,567", thousands(1234567))
}

// GNU time's report gives the user and the system time apart: the floor's are
// printed apart (most of a plan's reading can be the kernel's).
func TestReadTimeKeepsUserAndSystemApart(t *testing.T) {
	f := filepath.Join(t.TempDir(), "time")
	require.NoError(t, os.WriteFile(f, []byte("Command exited with non-zero status 1\n51200 0.25 0.50\n"), 0o644))
	rss, user, sys, err := readTime(f)
	require.NoError(t, err)
	require.Equal(t, int64(50<<20), rss)
	require.Equal(t, 250*time.Millisecond, user)
	require.Equal(t, 500*time.Millisecond, sys)
}
