package bot

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/internal/testing/githubtest"
	"github.com/shardgate/shardgate/internal/testing/tftest"
)

// monorepoProjects and monorepoWorkers are issue 37's shape: 60 projects
// on one shared module, queue.workers: 2.
const (
	monorepoProjects = 60
	monorepoWorkers  = 2
)

// BenchmarkSharedModulePR60 is issue 37's monorepo through `shardgate serve`
// as a process (the fake GitHub on loopback, the real terraform, GitHub's
// pace of content writes as shipped): the time from the pull_request webhook
// of a change to the shared module to the last of the 60 projects' results
// on GitHub (the aggregate `shardgate` check run, into which 60 projects
// fold), side by side with raw `terraform init && plan -out && show -json`
// of the same 60 projects at the same concurrency, in the same run (before
// and after serve, their mean the comparison). It also
// reports the GitHub API calls and content writes of the job, serve's peak
// RSS, the comment's length, and fails when a project was planned twice or
// the comment misses one. Targets (issue 37): serve ≤ 1.3× raw, calls ≤ 3
// per project + 20, peak RSS ≤ 400 MiB. Run with -benchtime 1x.
func BenchmarkSharedModulePR60(b *testing.B) {
	benchMonorepoChange(b, "shared-module PR", func(h *harness, i int) monorepoChange {
		pr := openSharedModulePR(h, fmt.Sprintf("shared-v2-%d", i))
		return monorepoChange{event: "pull_request", body: githubtest.PullRequestOpened(b, h.gh.PRPayload(owner, repoName, pr.Number)),
			headSHA: pr.HeadSHA, reported: func(names []string) {
				// Every project named in one comment under GitHub's limit.
				comment := h.eventuallyComment(pr, "done: planned")
				require.Less(b, len(comment), 65536)
				for _, n := range names {
					require.Contains(b, comment, "`"+n+"`")
				}
				b.ReportMetric(float64(len(comment)), "comment-chars")
				b.Logf("comment %d chars", len(comment))
			}}
	})
}

// BenchmarkMergeGroup60 is BenchmarkSharedModulePR60's change landing
// through GitHub's merge queue: the pull request is opened (never
// delivered) and queued alone, and the merge group's checks_requested
// webhook reaches serve. It times the webhook to the completion of the
// aggregate `shardgate` check run on the group's head (60 projects fold into
// it: no project gets a check run), against raw terraform of the same 60
// projects of the group's head at the same concurrency, and reports and
// checks what the PR benchmark does but the comment (the group has none of
// its own; its pull request, never planned, has none to note the verdict
// on). Targets as the PR's. Run with -benchtime 1x.
func BenchmarkMergeGroup60(b *testing.B) {
	benchMonorepoChange(b, "merge group", func(h *harness, i int) monorepoChange {
		pr := openSharedModulePR(h, fmt.Sprintf("shared-v2-%d", i))
		g, body := h.groupCheckRequested(nil, pr)
		return monorepoChange{event: "merge_group", body: body, headSHA: g.HeadSHA}
	})
}

// monorepoChange is a change to the monorepo's shared module as it reaches
// shardgate: the webhook of event, and the commit it judges (the aggregate
// check run on it ends the timing; raw terraform plans its tree).
type monorepoChange struct {
	event   string
	body    []byte
	headSHA string
	// reported, if set, checks and reports what the change leaves on GitHub
	// besides its check runs, once its job is done.
	reported func(names []string)
}

// benchMonorepoChange times, through `shardgate serve` with
// monorepoWorkers, the change open makes to a repository of monorepoProjects
// projects on one shared module, from its webhook to the completion of the
// aggregate check run on its head, against raw terraform of the same
// projects of the same commit at the same concurrency (before and after
// serve, their mean the comparison). It fails when a project was planned
// twice or got a check run of its own, or the job failed; it reports the
// job's GitHub calls and writes, and serve's peak RSS.
func benchMonorepoChange(b *testing.B, what string, open func(h *harness, i int) monorepoChange) {
	tftest.SkipIfShort(b, "uses the real terraform and builds shardgate")
	tf := tftest.Binary(b)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		h := newProcessHarnessBase(b)
		names := writeMonorepo(h, monorepoProjects)
		p, admin := startMonorepoServe(b, h)
		change := open(h, i)
		// Raw terraform runs before and after serve, and serve is compared
		// with their mean: a shared machine's speed drifts over minutes.
		rawBefore := rawMonorepoPlans(b, h, tf, change.headSHA, names, monorepoWorkers)
		before := len(h.gh.Requests())
		b.StartTimer()

		start := time.Now()
		p.deliver(change.event, change.body)
		var end time.Time
		require.Eventually(b, func() bool {
			for _, c := range h.gh.CheckRuns(owner, repoName) {
				if c.Name == prreport.CheckGateName && c.HeadSHA == change.headSHA && c.Status == "completed" {
					end = time.Now()
					return true
				}
			}
			return false
		}, 10*time.Minute, 10*time.Millisecond, "the aggregate check never completed: %s", p.logs)
		b.StopTimer()
		service := end.Sub(start)
		jobs := `shardgate_job_duration_seconds_count{event="` + change.event + `"`
		require.Eventually(b, func() bool { return metricSum(b, admin, jobs) > 0 }, time.Minute, 10*time.Millisecond, "the job never ended: %s", p.logs)
		require.Equal(b, 1.0, metricSum(b, admin, jobs+`,outcome="done"}`), "the job failed: %s", p.logs)
		if change.reported != nil {
			change.reported(names)
		}
		reqs := h.gh.Requests()[before:]
		writes := 0
		for _, q := range reqs {
			if q.Method != http.MethodGet {
				writes++
			}
		}
		rss := peakRSS(b, p.cmd.Process.Pid)
		plans := metricSum(b, admin, "shardgate_plan_duration_seconds_count")
		tfPlans := metricSum(b, admin, `shardgate_terraform_command_duration_seconds_count{command="plan"`)

		// Each project planned once and a row of the aggregate check run,
		// with no check run of its own (they fold).
		require.Equal(b, float64(monorepoProjects), plans, "projects planned")
		require.Equal(b, float64(monorepoProjects), tfPlans, "terraform plan runs")
		gate := h.check(prreport.CheckGateName, change.headSHA)
		for _, n := range names {
			require.Contains(b, gate.Summary, "`"+n+"`")
		}
		for _, c := range h.gh.CheckRuns(owner, repoName) {
			require.False(b, strings.HasPrefix(c.Name, prreport.CheckPlanPrefix) && c.HeadSHA == change.headSHA, "a project's own check run: %s", c.Name)
		}

		rawAfter := rawMonorepoPlans(b, h, tf, change.headSHA, names, monorepoWorkers)
		raw := (rawBefore + rawAfter) / 2
		b.ReportMetric(service.Seconds(), "serve-s")
		b.ReportMetric(raw.Seconds(), "raw-terraform-s")
		b.ReportMetric(rawBefore.Seconds(), "raw-before-s")
		b.ReportMetric(rawAfter.Seconds(), "raw-after-s")
		b.ReportMetric(service.Seconds()/raw.Seconds(), "serve/raw")
		b.ReportMetric(float64(len(reqs)), "github-calls")
		b.ReportMetric(float64(3*monorepoProjects+20), "github-calls-limit")
		b.ReportMetric(float64(writes), "github-writes")
		b.ReportMetric(float64(rss)/(1<<20), "serve-peak-rss-MiB")
		b.Logf("%s, %d projects, queue.workers %d: serve %.1f s, raw terraform %.1f s (before %.1f s, after %.1f s; %.2f×); %d GitHub calls (%d writes, limit %d); serve peak RSS %.0f MiB; aggregate check %s",
			what, monorepoProjects, monorepoWorkers, service.Seconds(), raw.Seconds(), rawBefore.Seconds(), rawAfter.Seconds(), service.Seconds()/raw.Seconds(), len(reqs), writes, 3*monorepoProjects+20,
			float64(rss)/(1<<20), gate.Conclusion)
		logRoutes(b, what, routesOf(reqs), 1)
		stopServe(p)
	}
}

// startMonorepoServe runs `shardgate serve` on h with queue.workers at
// monorepoWorkers and an admin listener for its metrics, whose URL it returns.
func startMonorepoServe(b *testing.B, h *harness) (*serveProcess, string) {
	b.Helper()
	listen, adminListen := freePort(b), freePort(b)
	cfgPath := writeServeConfig(b, h, listen)
	token := filepath.Join(b.TempDir(), "admin-token")
	require.NoError(b, os.WriteFile(token, []byte(strings.Repeat("t", 32)), 0o600))
	f, err := os.OpenFile(cfgPath, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(b, err)
	_, err = fmt.Fprintf(f, "queue:\n  workers: %d\nadmin:\n  listen: %s\n  token_file: %s\n", monorepoWorkers, adminListen, token)
	require.NoError(b, err)
	require.NoError(b, f.Close())
	p := &serveProcess{t: b, bin: buildShardgate(b), cfg: cfgPath, url: "http://" + listen}
	p.start()
	b.Cleanup(func() { stopServe(p) })
	return p, "http://" + adminListen
}

func stopServe(p *serveProcess) {
	if p.cmd.ProcessState == nil {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		_ = p.cmd.Wait()
	}
}

// peakRSS is a live process's peak resident set (VmHWM), in bytes.
func peakRSS(t testing.TB, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^VmHWM:\s+(\d+) kB`).FindSubmatch(b)
	require.NotNil(t, m, "no VmHWM in /proc/%d/status", pid)
	kb, err := strconv.ParseInt(string(m[1]), 10, 64)
	require.NoError(t, err)
	return kb << 10
}

// metricSum sums the samples of the admin listener's /metrics whose line
// starts with prefix.
func metricSum(t testing.TB, admin, prefix string) float64 {
	t.Helper()
	resp, err := http.Get(admin + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var sum float64
	for _, line := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64)
		require.NoError(t, err, line)
		sum += v
	}
	return sum
}

// routesOf counts requests by route.
func routesOf(reqs []githubtest.Recorded) map[string]int {
	routes := map[string]int{}
	for _, q := range reqs {
		routes[route(q)]++
	}
	return routes
}
