package bot

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/streamroot"
	"github.com/shardgate/shardgate/internal/testing/githubtest"
	"github.com/shardgate/shardgate/store"
)

// Issue 22's "done when": a 500-comment `/shardgate help` storm on one pull
// request, and a normal pull request on another repository of the same
// installation, under the fake GitHub's limits set low (300 requests an
// hour, 20 content-creating requests a minute), their windows scaled down so
// the test takes a minute or two: an hour is 6 s, a minute of content
// creation 1 s.
const (
	stormComments = 500
	stormWithin   = 2 * time.Minute
)

// otherRepo is the other repository of the installation.
const otherRepo = "ledger"

var scaledLimits = githubtest.RateLimits{Primary: 300, Window: 6 * time.Second}

// Every job completes, none fails or spends an attempt on the primary
// limit, the other repository's plan finishes before the storm's tail, and
// nothing is sent while the budget is spent but the request that learns the
// new one.
func TestAStormOnOnePullRequestLosesNoJobAndStarvesNoOther(t *testing.T) {
	stormAndAnotherRepository(t, scaledLimits)
}

// The same with the secondary limit on content creation too, answered with
// Retry-After: nothing is sent while a Retry-After holds but what was in
// flight when it began.
func TestAStormUnderRetryAfterLosesNoJobAndStarvesNoOther(t *testing.T) {
	limits := scaledLimits
	limits.Content, limits.ContentWindow, limits.RetryAfter = 20, time.Second, time.Second
	stormAndAnotherRepository(t, limits)
}

func stormAndAnotherRepository(t *testing.T, limits githubtest.RateLimits) {
	if testing.Short() {
		t.Skip("terraform")
	}
	h := newHarnessBase(t)
	h.cfg.QueueSize = 2 * stormComments // the intake takes the whole storm
	h.start()
	stormed := h.openPR("storm", with(baseGroups, map[string]int{"create-order/billing": 6, "create-order/audit": 6}))
	other, opened := h.otherRepositoryPR(otherRepo)
	h.gh.SetRateLimits(limits)

	ids := h.storm(stormed, stormComments)
	code, r := h.deliver("pull_request", opened)
	require.Equal(t, 202, code, r.Reason)
	otherID := r.JobID

	jobs := h.waitAll(append(slices.Clone(ids), otherID), stormWithin)
	// Every finding is reported, not only the first.
	var unfinished, failed, retried []string
	var ends []time.Time // of the storm's finished jobs
	for _, id := range append(slices.Clone(ids), otherID) {
		switch j := jobs[id]; {
		case j.State == store.JobFailed:
			failed = append(failed, id+": "+j.LastError)
		case j.State != store.JobDone:
			unfinished = append(unfinished, id+" "+string(j.State))
		case id != otherID:
			ends = append(ends, j.UpdatedAt)
		}
		if jobs[id].Attempts > 1 {
			retried = append(retried, id)
		}
	}
	assert.Zero(t, len(failed), "no job fails: %v", few(failed))
	assert.Zero(t, len(unfinished), "every job completes within %s: %v", stormWithin, few(unfinished))
	assert.Zero(t, len(retried), "a wait for GitHub is not a failed attempt: %v", few(retried))

	// The other repository's plan finished before the last tenth of the
	// storm (a storm job not finished yet finishes after anything that did).
	o := jobs[otherID]
	if assert.Equal(t, store.JobDone, o.State, "the other repository's plan: %s", o.LastError) {
		planned := slices.ContainsFunc(h.gh.Comments(owner, otherRepo, other.Number), func(c githubtest.Comment) bool {
			return c.User == h.gh.BotLogin() && strings.Contains(c.Body, "done: planned")
		})
		assert.True(t, planned, "the other repository's pull request was planned")
		slices.SortFunc(ends, func(a, b time.Time) int { return a.Compare(b) })
		if tailStart := len(ids) * 9 / 10; tailStart < len(ends) {
			assert.True(t, o.UpdatedAt.Before(ends[tailStart]), "the other repository's plan finished at %s, the storm's tail began at %s (storm %s – %s)",
				o.UpdatedAt.Format(time.StampMilli), ends[tailStart].Format(time.StampMilli), ends[0].Format(time.StampMilli), ends[len(ends)-1].Format(time.StampMilli))
		}
		before := 0
		for _, e := range ends {
			if e.Before(o.UpdatedAt) {
				before++
			}
		}
		t.Logf("the other repository's plan finished after %d of the storm's %d jobs", before, len(ids))
	}

	reqs := h.gh.Requests()
	// The storm met the limit it is about: else it proves nothing. (Under
	// the secondary limit, that one binds before the primary budget is spent.)
	if limits.Content > 0 {
		secondary := slices.ContainsFunc(reqs, func(r githubtest.Recorded) bool { return r.Limited == "secondary" })
		assert.True(t, secondary, "the storm met the secondary limit at least once")
	} else {
		spent := slices.ContainsFunc(reqs, func(r githubtest.Recorded) bool { // took a window's last request
			return r.Budgeted && r.Remaining == 1 && r.Limited == ""
		})
		assert.True(t, spent, "the storm spent the installation's primary budget at least once")
	}
	overspent, inRetryAfter := budgetBreaches(reqs, h.cfg.Workers)
	assert.Zero(t, overspent, "requests sent at a spent primary budget beyond the one that learns its reset")
	assert.Zero(t, inRetryAfter, "requests sent during a Retry-After beyond those in flight when it began")
}

// few is the first of a list of findings, and how many more there are.
func few(list []string) string {
	if len(list) <= 3 {
		return strings.Join(list, "; ")
	}
	return strings.Join(list[:3], "; ") + fmt.Sprintf("; and %d more", len(list)-3)
}

// otherRepositoryPR adds a repository of the installation holding the same
// streams root (its own state file beside the harness's, which the sandbox
// lets terraform write) and opens a pull request that scales it: the pull
// request and its opened event.
func (h *harness) otherRepositoryPR(name string) (githubtest.PullRequest, []byte) {
	h.t.Helper()
	repo := githubtest.NewGitRepo(h.t)
	module, err := filepath.Glob(filepath.Join("..", "examples", "modules", "stream-group", "*"))
	require.NoError(h.t, err)
	for _, f := range module {
		b, err := os.ReadFile(f)
		require.NoError(h.t, err)
		repo.WriteFile("modules/stream-group/"+filepath.Base(f), string(b))
	}
	state := filepath.Join(filepath.Dir(h.state), name+".tfstate")
	repo.WriteFile("streams/main.tf", streamroot.MainTF(state, h.simURL, map[string]int{"payments/" + name: 2}))
	repo.WriteFile(".shardgate.yaml", "version: 1\nprojects:\n  - name: streams\n    dir: streams\n")
	repo.Commit("initial streams")
	h.gh.AddRepo(owner, name, repo)
	h.gh.SetPermission(owner, name, author, "write")
	repo.Branch("scale")
	repo.WriteFile("streams/main.tf", streamroot.MainTF(state, h.simURL, map[string]int{"payments/" + name: 4}))
	repo.Commit("scale " + name)
	pr := h.gh.OpenPR(owner, name, githubtest.PullRequest{HeadRef: "scale", User: author})
	return pr, githubtest.PullRequestOpened(h.t, h.gh.PRPayload(owner, name, pr.Number))
}

// waitAll waits until every job finished, or within has passed, and returns
// them as they are then (a job left queued or running fails the caller's
// checks, naming it).
func (h *harness) waitAll(ids []string, within time.Duration) map[string]*store.Job {
	h.t.Helper()
	deadline := time.Now().Add(within)
	for {
		jobs, pending := map[string]*store.Job{}, 0
		for _, id := range ids {
			j, err := h.st.GetJob(context.Background(), id)
			require.NoError(h.t, err)
			jobs[id] = j
			if j.State != store.JobDone && j.State != store.JobFailed {
				pending++
			}
		}
		if pending == 0 || time.Now().After(deadline) {
			if pending > 0 {
				h.t.Logf("%d of %d jobs unfinished after %s", pending, len(ids), within)
			}
			return jobs
		}
		time.Sleep(100 * time.Millisecond) // polling the store, not standing in for a clock
	}
}

// budgetBreaches counts, per installation, the requests the fake GitHub got
// while the installation's primary budget was spent, beyond the one per
// window that may learn the budget; and those that arrived while a secondary
// limit's Retry-After held, beyond what inFlight workers had sent before it
// began.
func budgetBreaches(reqs []githubtest.Recorded, inFlight int) (overspent, inRetryAfter int) {
	type window struct {
		installation int64
		reset        time.Time
	}
	atZero := map[window]int{}
	duringRetryAfter := 0
	for _, r := range reqs {
		if r.InstallationID == 0 {
			continue
		}
		if r.Budgeted && r.Remaining == 0 && !r.InRetryAfter {
			atZero[window{r.InstallationID, r.Reset}]++
		}
		switch {
		case r.Limited == "secondary" && !r.InRetryAfter: // a Retry-After begins
			inRetryAfter += max(duringRetryAfter-(inFlight-1), 0)
			duringRetryAfter = 0
		case r.InRetryAfter:
			duringRetryAfter++
		}
	}
	inRetryAfter += max(duringRetryAfter-(inFlight-1), 0)
	for _, n := range atZero {
		overspent += max(n-1, 0)
	}
	return overspent, inRetryAfter
}

// The storm test's count of requests sent at a spent budget tells a breach
// from the request that learns a reset, and from what was in flight when a
// Retry-After began.
func TestBudgetBreachesCountsRequestsSentAtASpentBudget(t *testing.T) {
	w1, w2 := time.Unix(1000, 0), time.Unix(1006, 0)
	ok := githubtest.Recorded{InstallationID: 1, Budgeted: true, Remaining: 5, Reset: w1}
	atZero := func(reset time.Time) githubtest.Recorded {
		return githubtest.Recorded{InstallationID: 1, Budgeted: true, Remaining: 0, Reset: reset, Limited: "primary"}
	}
	meets := githubtest.Recorded{InstallationID: 1, Limited: "secondary"}
	during := githubtest.Recorded{InstallationID: 1, Limited: "secondary", InRetryAfter: true}

	overspent, _ := budgetBreaches([]githubtest.Recorded{ok, atZero(w1), ok, atZero(w2)}, 2)
	require.Zero(t, overspent, "one request at 0 per window learns its reset")
	overspent, _ = budgetBreaches([]githubtest.Recorded{atZero(w1), atZero(w1), atZero(w1)}, 2)
	require.Equal(t, 2, overspent)
	overspent, _ = budgetBreaches([]githubtest.Recorded{{Remaining: 0, Budgeted: true}}, 2)
	require.Zero(t, overspent, "App and download requests are not the installation's")

	_, inRetryAfter := budgetBreaches([]githubtest.Recorded{meets, during, ok, meets, during}, 2)
	require.Zero(t, inRetryAfter, "one other worker's request was in flight")
	_, inRetryAfter = budgetBreaches([]githubtest.Recorded{meets, during, during, during, meets, during}, 2)
	require.Equal(t, 2, inRetryAfter)
}
