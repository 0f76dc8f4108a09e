package statuspage

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shardgate/shardgate/bot/server/livelog"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/store/applyqueue"
)

// overview is what the overview page shows. Every string in it is redacted
// before it is rendered (Redactor.Scrub), and escaped by the template.
type overview struct {
	Now      string
	Replica  string
	Problems []string
	// Enforcement is Options.Enforcement.
	Enforcement []string
	Streams     []streamView
	StateDepths []stateDepthView // statelocks.go
	Running     []runningView
	Plans       []planView
	Applies     []applyView
	DriftOff    bool
	Drift       []driftView
	// What is failing (failures.go): the banner's items, the failing jobs,
	// the services as last seen; FailuresOn when the page has a source.
	Banner     []string
	FailuresOn bool
	Failing    []failingView
	Reach      []reachView
	GitHub     []budgetView
	Settings   []Setting
	// The notifications pending and failed (notifications.go).
	NotificationsOn             bool
	NotifyPending, NotifyFailed []notificationView
}

// link is a text and, when one could be built from trusted parts, a URL.
type link struct {
	Text string
	URL  string
}

type streamView struct {
	Prefix, Coordinator string
	// State is the Terraform state of a lane of applies that change no
	// coordinator stream (an alarm, a bucket): they queue on their state
	// alone. "" for a stream's lane.
	State string
	Jobs  []queuedView
}

type queuedView struct {
	Position int
	Apply    string // "apply 12"
	PR       link
	Project  string
	State    string
	Attempt  int
	Holds    string // the stream lock and lease it holds, if it runs
	Waits    string // who it waits behind on this stream, and why
	Progress string
	LogURL   string
}

type runningView struct {
	Kind     string
	PR       link
	Project  string
	SHA      link
	Started  string
	LockWait string
	LogURL   string
}

type planView struct {
	PR        link
	Project   string
	Head      link
	Outcome   string
	Detail    string
	LockWaits []string
	PlannedAt string
	// Terraform names the binary when the server has several.
	Terraform string
}

type applyView struct {
	Apply    string
	PR       link
	Project  string
	Outcome  string
	Reason   string
	MergeSHA link
	MergedBy string
	// AppliedBy is the approver whose /shardgate apply <project> queued it.
	AppliedBy  string
	RequestIDs []string
	Prefix     string
	FinishedAt string
}

type driftView struct {
	Repo, Project, Status string
	Groups                []string
	Since, CheckedAt      string
	Issue                 link
}

const timeLayout = "2006-01-02 15:04:05 MST"

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(timeLayout)
}

// applyName is how the page names an apply job: by its number in the queue.
func applyName(seq string) string {
	if n, err := strconv.ParseUint(seq, 10, 64); err == nil {
		return "apply " + strconv.FormatUint(n, 10)
	}
	return "apply " + seq
}

// ApplyLogID is the live log id of an apply job's attempt.
func ApplyLogID(seq string, attempt int) string { return fmt.Sprintf("apply-%s-%d", seq, attempt) }

var shaPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{7,64}$`) })

// prLink links a pull request from its reference alone; the names are
// path-escaped, never taken from a payload's URL.
func (h *Handler) prLink(ref pullreq.Ref) link {
	l := link{Text: ref.String()}
	if h.o.GitHubURL != "" && ref.Owner != "" && ref.Repo != "" && ref.Number > 0 {
		l.URL = fmt.Sprintf("%s/%s/%s/pull/%d", h.o.GitHubURL, url.PathEscape(ref.Owner), url.PathEscape(ref.Repo), ref.Number)
	}
	return l
}

// commitLink links a commit of ref's repository when sha is a commit id.
func (h *Handler) commitLink(ref pullreq.Ref, sha string) link {
	l := link{Text: sha}
	if shaPattern().MatchString(sha) {
		l.Text = sha[:min(len(sha), 12)]
		if h.o.GitHubURL != "" && ref.Owner != "" && ref.Repo != "" {
			l.URL = fmt.Sprintf("%s/%s/%s/commit/%s", h.o.GitHubURL, url.PathEscape(ref.Owner), url.PathEscape(ref.Repo), sha)
		}
	}
	return l
}

// issueLink links an issue URL only when it is an https(s) address on the
// configured GitHub.
func (h *Handler) issueLink(raw string) link {
	l := link{Text: raw}
	u, err := url.Parse(raw)
	base, berr := url.Parse(h.o.GitHubURL)
	if raw == "" || err != nil || berr != nil || h.o.GitHubURL == "" {
		return l
	}
	if (u.Scheme == "https" || u.Scheme == "http") && u.Scheme == base.Scheme && u.Host == base.Host && u.User == nil {
		l.URL = u.String()
	}
	return l
}

// streams groups the live jobs by stream, each stream's jobs in merge order,
// with what each waits on.
func (h *Handler) streams(live []*applyqueue.Job) []streamView {
	now := h.o.Now()
	byStream := map[string][]*applyqueue.Job{}
	var keys []string
	for _, j := range live {
		for _, s := range j.Streams {
			if _, ok := byStream[s]; !ok {
				keys = append(keys, s)
			}
			byStream[s] = append(byStream[s], j)
		}
	}
	slices.Sort(keys)
	out := make([]streamView, 0, len(keys))
	for _, key := range keys {
		coordinator, prefix := planparse.SplitStreamKey(key)
		sv := streamView{Prefix: prefix, Coordinator: coordinator}
		sv.Jobs = h.lane(byStream[key], "stream", "stream "+prefix, func(j *applyqueue.Job) string { return otherStreams(j, key, live) }, now)
		out = append(out, sv)
	}
	return append(out, h.stateLanes(live, now)...)
}

// stateLanes are the lanes of the Terraform states that applies without a
// coordinator stream queue on, each with every live job of that state in
// merge order (one of a project's applies may change streams, the next not).
func (h *Handler) stateLanes(live []*applyqueue.Job, now time.Time) []streamView {
	var states []string
	for _, j := range live {
		if len(j.Streams) == 0 && j.StateKey != "" && !slices.Contains(states, j.StateKey) {
			states = append(states, j.StateKey)
		}
	}
	slices.Sort(states)
	out := make([]streamView, 0, len(states))
	for _, state := range states {
		var jobs []*applyqueue.Job
		for _, j := range live {
			if j.StateKey == state {
				jobs = append(jobs, j)
			}
		}
		out = append(out, streamView{State: state,
			Jobs: h.lane(jobs, "state", "Terraform state "+state, func(*applyqueue.Job) string { return "" }, now)})
	}
	return out
}

// lane is one lock's jobs in merge order, with what each holds and waits on;
// lock names the lock ("stream", "state"), on the thing locked, and more what
// the first in line also waits for.
func (h *Handler) lane(jobs []*applyqueue.Job, lock, on string, more func(*applyqueue.Job) string, now time.Time) []queuedView {
	var out []queuedView
	for i, j := range jobs {
		q := queuedView{Position: i + 1, Apply: applyName(j.Seq), PR: h.prLink(j.Ref), Project: j.Project,
			State: string(j.State), Attempt: j.Attempt, Progress: j.Progress}
		if _, ok := h.o.Logs.Get(ApplyLogID(j.Seq, j.Attempt)); ok {
			q.LogURL = "/jobs/" + url.PathEscape(ApplyLogID(j.Seq, j.Attempt))
		}
		if leased(j, now) {
			q.Holds = holding(j, lock)
		}
		if i > 0 {
			q.Waits = h.waitsBehind(lock, on, jobs[0], now)
		} else if !leased(j, now) {
			q.Waits = "first in line: starts when a scheduler picks it up" + more(j) + afterDependencies(j)
		}
		out = append(out, q)
	}
	return out
}

func leased(j *applyqueue.Job, now time.Time) bool {
	return j.LeaseOwner != "" && j.LeaseUntil.After(now)
}

func holding(j *applyqueue.Job, lock string) string {
	return fmt.Sprintf("holds the %s lock: %s, lease held by %s until %s, fencing token %d",
		lock, j.State, j.LeaseOwner, stamp(j.LeaseUntil), j.Fence)
}

// waitsBehind says why a job waits: the front of its lock's line.
func (h *Handler) waitsBehind(lock, on string, front *applyqueue.Job, now time.Time) string {
	who := fmt.Sprintf("waits behind %s (%s, project %s) on %s: ", applyName(front.Seq), front.Ref, front.Project, on)
	switch {
	case leased(front, now):
		return who + fmt.Sprintf("%s lock held by %s, %s on %s, lease until %s", lock, applyName(front.Seq), front.State, front.LeaseOwner, stamp(front.LeaseUntil))
	case front.LeaseOwner != "":
		return who + fmt.Sprintf("its lease by %s ran out at %s; another replica takes it over", front.LeaseOwner, stamp(front.LeaseUntil))
	default:
		return who + "it has not started yet"
	}
}

// otherStreams says when the first job of one stream still waits on another.
func otherStreams(j *applyqueue.Job, key string, live []*applyqueue.Job) string {
	var behind []string
	for _, s := range j.Streams {
		if s == key {
			continue
		}
		for _, e := range live {
			if e.Seq == j.Seq {
				break
			}
			if slices.Contains(e.Streams, s) {
				_, prefix := planparse.SplitStreamKey(s)
				behind = append(behind, fmt.Sprintf("%s on stream %s", applyName(e.Seq), prefix))
				break
			}
		}
	}
	if len(behind) == 0 {
		return ""
	}
	return "; it also waits behind " + strings.Join(behind, ", ")
}

// running lists this replica's running jobs and the state locks they wait on.
func (h *Handler) running() []runningView {
	var out []runningView
	for _, s := range h.o.Logs.Running() {
		rv := runningView{Kind: string(s.Info.Kind), PR: h.prLink(s.Info.Ref), Project: s.Info.Project,
			SHA: h.commitLink(s.Info.Ref, s.Info.SHA), Started: stamp(s.Info.Started), LogURL: "/jobs/" + url.PathEscape(s.Info.ID)}
		if w := s.LockWait; w != nil {
			rv.LockWait = lockWaitText(w)
		}
		out = append(out, rv)
	}
	return out
}

func lockWaitText(w *livelog.LockWait) string {
	holder := "a holder the backend does not name"
	if w.Who != "" {
		holder = w.Who
	}
	var about []string
	for _, part := range []string{w.ID, w.Operation, stamp(w.Created)} {
		if part != "" {
			about = append(about, part)
		}
	}
	if len(about) > 0 {
		holder += " (lock " + strings.Join(about, ", ") + ")"
	}
	return fmt.Sprintf("waiting for the Terraform state lock held by %s; waiting since %s, attempt %d; shardgate never force-unlocks",
		holder, stamp(w.Since), w.Attempt)
}

// build reads every source; a source that fails is named in Problems and
// its section left empty.
func (h *Handler) build(ctx context.Context) *overview {
	v := &overview{Now: stamp(h.o.Now()), Replica: h.o.Replica, DriftOff: h.o.Drift == nil, Enforcement: h.o.Enforcement}
	problem := func(what string, err error) {
		h.o.Log.WithError(err).Warn("status page: " + what)
		v.Problems = append(v.Problems, what+": "+err.Error())
	}
	live, err := h.o.Queue.Live(ctx)
	if err != nil {
		problem("read the apply queue", err)
	}
	v.Streams = h.streams(live)
	v.StateDepths = stateDepths(live)
	v.Running = h.running()
	if plans, err := h.o.History.RecentPlans(ctx, DefaultRecentPlans); err != nil {
		problem("read the recent plans", err)
	} else {
		v.Plans = h.plans(plans)
	}
	if last, err := h.o.Queue.LastSeq(ctx); err != nil {
		problem("read the apply queue", err)
	} else if audits, err := h.o.History.RecentAudits(ctx, last, DefaultRecentApplies); err != nil {
		problem("read the recent applies", err)
	} else {
		v.Applies = h.applies(audits)
	}
	if h.o.Drift != nil {
		if rows, err := h.o.Drift.Drift(ctx); err != nil {
			problem("read the drift checks", err)
		} else {
			v.Drift = h.drift(rows)
		}
	}
	v.FailuresOn = h.o.Failures != nil
	h.failures(ctx, v, problem)
	h.notifications(ctx, v, problem)
	if h.o.GitHub != nil {
		v.GitHub = h.budgets(h.o.GitHub())
	}
	v.Settings = slices.Clone(h.o.Settings)
	h.o.Redactor.Scrub(v)
	return v
}

// afterDependencies says that a job starts only after its merge's applies of
// the projects it depends on (depends_on) succeeded; "" without any.
func afterDependencies(j *applyqueue.Job) string {
	if len(j.After) == 0 {
		return ""
	}
	return fmt.Sprintf(", and only once the merge's applies of %s it depends on have succeeded (depends_on)", strings.Join(j.After, ", "))
}
