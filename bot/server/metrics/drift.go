package metrics

import (
	"math"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Drift check outcomes: the outcome label values of shardgate_drift_checks_total
// and the status values of shardgate_drift_projects (drift.Status).
var driftOutcomes = []string{"clean", "drifted", "error"}

// maxDriftProjects bounds the per-project drift series: the projects are
// those of the repositories the App is installed on, as their default
// branch's .shardgate.yaml names them, and beyond this many they are not
// shown per project (shardgate_drift_projects still counts them).
const maxDriftProjects = 500

// maxLabelRunes bounds a repository or project label value.
const maxLabelRunes = 100

// DriftProject is one project's last drift check, as the drift metrics show it.
type DriftProject struct {
	Repo, Project string
	// Status is clean, drifted or error.
	Status string
	// Groups is how many coordinator groups differ from the code.
	Groups    int
	CheckedAt time.Time
}

// driftCollector reports the projects' last drift checks from the store.
type driftCollector struct {
	projects, groups, checked *prometheus.Desc
	read                      func() ([]DriftProject, error)
}

func newDriftCollector(read func() ([]DriftProject, error)) prometheus.Collector {
	return &driftCollector{read: read,
		projects: prometheus.NewDesc("shardgate_drift_projects",
			"Projects by the status of their last drift check (NaN when the store cannot be read).", []string{"status"}, nil),
		groups: prometheus.NewDesc("shardgate_drift_groups",
			"Coordinator groups whose live shard count differs from the code, per project, at its last drift check.", []string{"repo", "project"}, nil),
		checked: prometheus.NewDesc("shardgate_drift_last_check_timestamp_seconds",
			"When a project's last drift check ran (Unix time).", []string{"repo", "project"}, nil)}
}

func (c *driftCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.projects
	ch <- c.groups
	ch <- c.checked
}

func (c *driftCollector) Collect(ch chan<- prometheus.Metric) {
	var ps []DriftProject
	err := errNoSource
	if c.read != nil {
		ps, err = c.read()
	}
	counts := map[string]int{}
	for i, p := range ps {
		counts[p.Status]++
		if i >= maxDriftProjects {
			continue
		}
		repo, project := capLabel(p.Repo), capLabel(p.Project)
		ch <- prometheus.MustNewConstMetric(c.groups, prometheus.GaugeValue, float64(p.Groups), repo, project)
		ch <- prometheus.MustNewConstMetric(c.checked, prometheus.GaugeValue, float64(p.CheckedAt.Unix()), repo, project)
	}
	for _, st := range driftOutcomes {
		v := float64(counts[st])
		if err != nil {
			v = math.NaN()
		}
		ch <- prometheus.MustNewConstMetric(c.projects, prometheus.GaugeValue, v, st)
	}
}

func capLabel(s string) string {
	if r := []rune(s); len(r) > maxLabelRunes {
		return string(r[:maxLabelRunes]) + "…"
	}
	return s
}

// ObserveDriftCheck counts one project's drift check by its outcome (clean,
// drifted, error; anything else as other).
func (m *Metrics) ObserveDriftCheck(outcome string) {
	if m == nil {
		return
	}
	m.driftChecks.WithLabelValues(bounded(outcome, driftOutcomes)).Inc()
}

// bounded is v when it is one of allowed, else otherLabel.
func bounded(v string, allowed []string) string {
	for _, a := range allowed {
		if v == a {
			return v
		}
	}
	return otherLabel
}
