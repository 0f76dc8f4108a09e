// Package metricstest reads metrics back in tests: the series a registry
// gathers and the metrics docs/metrics.md documents.
package metricstest

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
)

// Documented is one row of docs/metrics.md's table.
type Documented struct {
	Kind   string
	Labels []string // sorted
}

var docRow = regexp.MustCompile("^\\| `(shardgate_[a-z_]+)` \\| ([a-z]+) \\|([^|]*)\\|")

// ReadDoc returns the metrics the document at path (docs/metrics.md)
// documents, by name.
func ReadDoc(t testing.TB, path string) map[string]Documented {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	out := map[string]Documented{}
	for _, line := range strings.Split(string(b), "\n") {
		m := docRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		var labels []string
		for _, l := range strings.Split(m[3], ",") {
			if l = strings.Trim(strings.TrimSpace(l), "`"); l != "" {
				labels = append(labels, l)
			}
		}
		sort.Strings(labels)
		require.NotContains(t, out, m[1], "documented twice")
		out[m[1]] = Documented{Kind: m[2], Labels: labels}
	}
	require.NotEmpty(t, out, "no metric rows found in %s", path)
	return out
}

// sample is one series as gathered: a counter's or gauge's value, a
// histogram's sample count.
type sample struct {
	value float64
	count uint64
}

// series gathers the series of name whose label values are values, in
// label-name order; the zero sample when there is none.
func series(t testing.TB, reg prometheus.Gatherer, name string, values ...string) sample {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			var got []string
			for _, l := range m.GetLabel() {
				got = append(got, l.GetValue())
			}
			if strings.Join(got, "|") == strings.Join(values, "|") {
				return sample{value: m.GetCounter().GetValue() + m.GetGauge().GetValue(), count: m.GetHistogram().GetSampleCount()}
			}
		}
	}
	return sample{}
}

// HistCount is the sample count of a histogram series (0 when absent).
func HistCount(t testing.TB, reg prometheus.Gatherer, name string, values ...string) uint64 {
	t.Helper()
	return series(t, reg, name, values...).count
}

// Value is the value of a counter or gauge series (0 when absent).
func Value(t testing.TB, reg prometheus.Gatherer, name string, values ...string) float64 {
	t.Helper()
	return series(t, reg, name, values...).value
}

// Gauge gathers reg and returns the gauge name (with state when given); it
// fails the test when there is no such series.
func Gauge(t testing.TB, reg prometheus.Gatherer, name, state string) float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if state == "" || len(m.GetLabel()) == 1 && m.GetLabel()[0].GetValue() == state {
				return m.GetGauge().GetValue()
			}
		}
	}
	t.Fatalf("no %s{state=%q}", name, state)
	return 0
}
