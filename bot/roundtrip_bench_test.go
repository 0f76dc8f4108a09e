package bot

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/phases"
	"github.com/shardgate/shardgate/internal/testing/githubtest"
	"github.com/shardgate/shardgate/internal/testing/tftest"
	"github.com/shardgate/shardgate/store/applyqueue"
)

// BenchmarkPlanRoundTrip is a plan job through the whole service (the
// harness: the fake GitHub on loopback, the real terraform): from the signed
// pull_request webhook to the last edit of shardgate's comment, against the
// raw `terraform init && terraform plan -out && terraform show -json` of the
// same project run as processes. It also counts the GitHub API calls of one
// plan job and of one merge with its apply, by route (-v lists them).
// Issue 25's target: overhead ≤ 150 ms plus GitHub's own latency.
func BenchmarkPlanRoundTrip(b *testing.B) {
	tftest.SkipIfShort(b, "uses the real terraform")
	h := newHarnessBase(b)
	// The proxy in front of the fake GitHub stamps when each answer left it,
	// so the round trip ends at the comment's last edit, not at a poll.
	stamps := &githubStamps{}
	h.cfg.GitHubAPIURL = stamps.proxy(b, h.gh.URL())
	h.start()
	tf := tftest.Binary(b)

	var service, raw, githubOwn time.Duration
	rawPhases := map[string]time.Duration{}
	var calls, notModified int
	routes := map[string]int{}
	phases0 := terraformSeconds(b, h.srv.registry)
	plan0, job0 := histSum(b, h.srv.registry, "shardgate_plan_duration_seconds"), histSum(b, h.srv.registry, "shardgate_job_duration_seconds")
	phase0 := histSumBy(b, h.srv.registry, "shardgate_plan_job_phase_seconds", "phase")
	var pr githubtest.PullRequest
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		branch := fmt.Sprintf("scale-%d", i)
		h.repo.Checkout("main")
		h.repo.Branch(branch)
		h.writeRoot(with(baseGroups, map[string]int{"create-order/billing": 6, "create-order/audit": 6}))
		h.repo.Commit("scale create-order on " + branch)
		pr = h.gh.OpenPR(owner, repoName, githubtest.PullRequest{HeadRef: branch, User: author})
		body := githubtest.PullRequestOpened(b, h.gh.PRPayload(owner, repoName, pr.Number))
		before := len(h.gh.Requests())
		stamps.reset()
		b.StartTimer()

		start := time.Now()
		code, r := h.deliver("pull_request", body)
		require.Equal(b, 202, code, r.Reason)
		h.waitJob(r.JobID)
		b.StopTimer()
		end, ok := stamps.lastCommentEdit()
		require.True(b, ok, "the plan job never wrote its comment")
		service += end.Sub(start)
		githubOwn += stamps.githubTime()
		reqs := h.gh.Requests()[before:]
		calls += len(reqs)
		for _, q := range reqs {
			routes[route(q)]++
			if q.Status == http.StatusNotModified {
				notModified++
			}
		}
		for c, d := range rawPlan(b, h, tf, branch) {
			rawPhases[c] += d
			raw += d
		}
		b.StartTimer()
	}
	b.StopTimer()
	n := float64(b.N)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / n }
	b.ReportMetric(ms(service), "ms/job")
	b.ReportMetric(ms(raw), "raw-ms/job")
	b.ReportMetric(ms(service-raw), "overhead-ms")
	// The target: overhead ≤ 150 ms plus GitHub's own latency, here the
	// time the fake GitHub took to answer shardgate's calls.
	b.ReportMetric(ms(githubOwn), "github-own-ms")
	b.ReportMetric(ms(service-raw-githubOwn), "overhead-less-github-ms")
	b.ReportMetric(float64(calls)/n, "github-calls/plan")
	// Conditional reads answered 304 Not Modified: calls that cost no budget.
	b.ReportMetric(float64(notModified)/n, "github-304/plan")
	// The breakdown from the service's own metrics, per job.
	tfPhases := terraformSeconds(b, h.srv.registry)
	var runs []string
	for _, c := range []string{"init", "plan", "show"} {
		b.ReportMetric((tfPhases[c]-phases0[c])*1000/n, "tf-"+c+"-ms")
		runs = append(runs, fmt.Sprintf("%s %.1f× (raw %.0f ms)", c, (tfPhases[c+".n"]-phases0[c+".n"])/n, ms(rawPhases[c])))
	}
	b.Logf("terraform runs per plan job: %s", strings.Join(runs, ", "))
	plan := histSum(b, h.srv.registry, "shardgate_plan_duration_seconds") - plan0
	job := histSum(b, h.srv.registry, "shardgate_job_duration_seconds") - job0
	b.ReportMetric(plan*1000/n, "plan-ms")
	b.ReportMetric(job*1000/n, "job-ms")
	// The breakdown, from the job's own phase timings: checkout,
	// sandbox start, terraform, parse, live reads, policy, GitHub calls.
	byPhase := histSumBy(b, h.srv.registry, "shardgate_plan_job_phase_seconds", "phase")
	var phased float64
	for _, p := range phases.Names {
		d := (byPhase[p] - phase0[p]) * 1000 / n
		phased += d
		b.ReportMetric(d, strings.ReplaceAll(p, "_", "-")+"-ms")
	}
	b.ReportMetric(job*1000/n-phased, "other-ms")
	logRoutes(b, "plan job", routes, b.N)

	// A second plan of the last PR (/shardgate plan), counted once: the
	// reads the first job made are asked again conditionally.
	before := len(h.gh.Requests())
	h.comment(pr, approver, "/shardgate plan")
	routes, notModified = map[string]int{}, 0
	reqs := h.gh.Requests()[before:]
	for _, q := range reqs {
		routes[route(q)]++
		if q.Status == http.StatusNotModified {
			notModified++
		}
	}
	b.ReportMetric(float64(len(reqs)), "github-calls/replan")
	b.ReportMetric(float64(notModified), "github-304/replan")
	logRoutes(b, "second plan of a PR", routes, 1)

	// One merge and its apply (the last PR, attested): counted once, not timed.
	h.comment(pr, approver, "/shardgate attest quiesce create-order")
	before = len(h.gh.Requests())
	h.merge(pr, approver)
	jobs := h.waitApplies(pr)
	require.Len(b, jobs, 1)
	require.Equal(b, applyqueue.Applied, jobs[0].State, jobs[0].Reason)
	h.eventuallyComment(pr, "✅ applied")
	routes = map[string]int{}
	reqs = h.gh.Requests()[before:]
	notModified = 0
	for _, q := range reqs {
		routes[route(q)]++
		if q.Status == http.StatusNotModified {
			notModified++
		}
	}
	b.ReportMetric(float64(len(reqs)), "github-calls/apply")
	b.ReportMetric(float64(notModified), "github-304/apply")
	logRoutes(b, "merge and apply", routes, 1)
}

// rawPlan runs init, plan -out and show -json on a fresh export of branch, as
// a user would by hand, and returns the time of each command.
func rawPlan(b *testing.B, h *harness, tf, branch string) map[string]time.Duration {
	b.Helper()
	dir := exportTree(b, h, branch)
	env := append(os.Environ(), "TF_IN_AUTOMATION=1", "TF_CLI_CONFIG_FILE=", "TF_VAR_coordinator_username=admin", "TF_VAR_coordinator_password=password")
	took := map[string]time.Duration{}
	for _, args := range [][]string{{"init", "-input=false"}, {"plan", "-input=false", "-out=tfplan"}, {"show", "-json", "tfplan"}} {
		cmd := exec.Command(tf, args...)
		cmd.Dir, cmd.Env = filepath.Join(dir, "streams"), env
		start := time.Now()
		out, err := cmd.Output()
		took[args[0]] = time.Since(start)
		require.NoError(b, err, string(out))
	}
	return took
}

// githubStamps is a reverse proxy in front of the fake GitHub that keeps the
// time each comment write was answered.
type githubStamps struct {
	mu    sync.Mutex
	edits []time.Time
	// served is the time the fake GitHub took to answer, summed: GitHub's
	// own latency, which the target leaves out.
	served time.Duration
}

var commentWrite = regexp.MustCompile(`^/repos/[^/]+/[^/]+/issues/(\d+/comments|comments/\d+)$`)

func (s *githubStamps) proxy(b *testing.B, target string) string {
	u, err := url.Parse(target)
	require.NoError(b, err)
	rp := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		begin := time.Now()
		rp.ServeHTTP(w, r)
		s.mu.Lock()
		s.served += time.Since(begin)
		s.mu.Unlock()
		if (r.Method == http.MethodPost || r.Method == http.MethodPatch) && commentWrite.MatchString(strings.TrimPrefix(r.URL.Path, strings.TrimSuffix(u.Path, "/"))) {
			s.mu.Lock()
			s.edits = append(s.edits, time.Now())
			s.mu.Unlock()
		}
	}))
	b.Cleanup(srv.Close)
	return srv.URL + u.Path
}

func (s *githubStamps) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.edits = nil
	s.served = 0
}

func (s *githubStamps) githubTime() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.served
}

func (s *githubStamps) lastCommentEdit() (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.edits) == 0 {
		return time.Time{}, false
	}
	return s.edits[len(s.edits)-1], true
}

var routeID = regexp.MustCompile(`/([0-9]+|[0-9a-f]{40})(/|$)`)

// route is a request's method and path with ids and shas folded, marked
// when it was answered 304 Not Modified.
func route(r githubtest.Recorded) string {
	p := r.Path
	for routeID.MatchString(p) {
		p = routeID.ReplaceAllString(p, "/{id}$2")
	}
	if r.Status == http.StatusNotModified {
		p += " (304)"
	}
	return r.Method + " " + p
}

func logRoutes(b *testing.B, what string, routes map[string]int, jobs int) {
	keys := make([]string, 0, len(routes))
	for k := range routes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	calls := make([]string, len(keys))
	for i, k := range keys {
		calls[i] = fmt.Sprintf("%.1f× %s", float64(routes[k])/float64(jobs), k)
	}
	// one line: a benchmark's log is cut after ten lines without -v
	b.Logf("GitHub calls per %s: %s", what, strings.Join(calls, "; "))
}

// histSum is the sum of every series of a histogram, in seconds.
func histSum(b *testing.B, reg prometheus.Gatherer, name string) float64 {
	families, err := reg.Gather()
	require.NoError(b, err)
	sum := 0.0
	for _, f := range families {
		if f.GetName() == name {
			for _, m := range f.GetMetric() {
				sum += m.GetHistogram().GetSampleSum()
			}
		}
	}
	return sum
}

// histSumBy is the sum of a histogram's series by the value of label, in
// seconds.
func histSumBy(b testing.TB, reg prometheus.Gatherer, name, label string) map[string]float64 {
	families, err := reg.Gather()
	require.NoError(b, err)
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label {
					out[l.GetValue()] += m.GetHistogram().GetSampleSum()
				}
			}
		}
	}
	return out
}

// terraformSeconds is shardgate_terraform_command_duration_seconds' sum by
// command, and ".n" after a command its count.
func terraformSeconds(b *testing.B, reg prometheus.Gatherer) map[string]float64 {
	families, err := reg.Gather()
	require.NoError(b, err)
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "shardgate_terraform_command_duration_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "command" {
					out[l.GetValue()] += m.GetHistogram().GetSampleSum()
					out[l.GetValue()+".n"] += float64(m.GetHistogram().GetSampleCount())
				}
			}
		}
	}
	return out
}
