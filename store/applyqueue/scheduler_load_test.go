package applyqueue

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/logctx"
)

// applySim is a fake apply: the streams it locks and how long it runs.
type applySim struct {
	project string
	streams []string
	d       time.Duration
}

// applyCriticalPath is the makespan with unlimited parallelism and no
// overhead: each job starts when the last earlier job on each of its streams
// has finished, which is the longest chain of jobs linked by shared streams
// in enqueue order.
func applyCriticalPath(jobs []applySim) time.Duration {
	last := map[string]time.Duration{}
	var cp time.Duration
	for _, j := range jobs {
		var start time.Duration
		for _, s := range j.streams {
			start = max(start, last[s])
		}
		end := start + j.d
		for _, s := range j.streams {
			last[s] = end
		}
		cp = max(cp, end)
	}
	return cp
}

// applySpan is what the fake run saw of one job.
type applySpan struct {
	seq        string
	streams    []string
	start, end time.Time
}

// applyRecorder is a fake RunFunc that sleeps for each job's duration,
// records its span, and notes any moment two jobs held one stream.
type applyRecorder struct {
	durations map[string]time.Duration // by project

	mu      sync.Mutex
	holders map[string]string // stream → project running on it
	spans   []applySpan
	overlap []string
	// running counts the jobs in run now, peak the most at once.
	running, peak int
	// meet, when set, holds the first job in run until a second job runs
	// beside it (closed then): a scheduler that ran one job at a time would
	// never close it.
	meet     chan struct{}
	meetOnce sync.Once
	held     bool
}

func newApplyRecorder(jobs []applySim) *applyRecorder {
	r := &applyRecorder{durations: map[string]time.Duration{}, holders: map[string]string{}}
	for _, j := range jobs {
		r.durations[j.project] = j.d
	}
	return r
}

func (r *applyRecorder) run(ctx context.Context, job *Job) (State, string) {
	r.mu.Lock()
	for _, s := range job.Streams {
		if h := r.holders[s]; h != "" {
			r.overlap = append(r.overlap, fmt.Sprintf("%s and %s on %s", h, job.Project, s))
		}
		r.holders[s] = job.Project
	}
	r.running++
	r.peak = max(r.peak, r.running)
	hold := r.meet != nil && !r.held
	if r.meet != nil && r.running >= 2 {
		r.meetOnce.Do(func() { close(r.meet) })
	}
	r.held = r.held || hold
	r.mu.Unlock()
	if hold {
		select {
		case <-r.meet:
		case <-ctx.Done():
		case <-time.After(time.Minute): // a deadline, not a clock: check() fails on peak 1
		}
	}
	start := time.Now()
	time.Sleep(r.durations[job.Project]) // the simulated apply
	end := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.running--
	for _, s := range job.Streams {
		if r.holders[s] == job.Project {
			delete(r.holders, s)
		}
	}
	r.spans = append(r.spans, applySpan{seq: job.Seq, streams: job.Streams, start: start, end: end})
	return Applied, ""
}

// check asserts that no stream ever ran two jobs at once and that each
// stream ran its jobs in Seq order, each after the previous one ended; it
// returns the makespan.
func (r *applyRecorder) check(t testing.TB, jobs int) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	require.Empty(t, r.overlap, "jobs overlapped on a stream")
	require.Len(t, r.spans, jobs, "every job ran once")
	slices.SortFunc(r.spans, func(a, b applySpan) int { return a.start.Compare(b.start) })
	first, last := r.spans[0].start, r.spans[0].end
	prev := map[string]applySpan{}
	for _, sp := range r.spans {
		last = latest(last, sp.end)
		for _, s := range sp.streams {
			if p, ok := prev[s]; ok {
				require.Less(t, p.seq, sp.seq, "stream %s ran %s before %s", s, sp.seq, p.seq)
				require.False(t, sp.start.Before(p.end), "stream %s: %s started before %s ended", s, sp.seq, p.seq)
			}
			prev[s] = sp
		}
	}
	return last.Sub(first)
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// runApplySims enqueues jobs on q, runs them all with a scheduler and returns
// the recorder once every job is finished.
func runApplySims(t testing.TB, q *Queue, jobs []applySim) *applyRecorder {
	ctx := context.Background()
	seqs := make([]string, 0, len(jobs))
	for _, j := range jobs {
		job := &Job{Ref: applyTestRef, Project: j.project, Streams: j.streams}
		require.NoError(t, q.Enqueue(ctx, job))
		seqs = append(seqs, job.Seq)
	}
	rec := newApplyRecorder(jobs)
	rec.meet = make(chan struct{})
	s := NewScheduler(q, rec.run, logctx.NewLogger(io.Discard, logrus.WarnLevel))
	s.Poll = 50 * time.Millisecond
	require.NoError(t, s.Start(ctx))
	defer func() { require.NoError(t, s.Close(ctx)) }()
	require.Eventually(t, func() bool {
		j, err := q.Get(ctx, seqs[len(seqs)-1])
		if err != nil || !j.State.Finished() {
			return false
		}
		all, err := q.List(ctx)
		return err == nil && !slices.ContainsFunc(all, func(j *Job) bool { return !j.State.Finished() })
	}, time.Minute, 2*time.Millisecond)
	return rec
}

func TestApplyScheduler30JobsOver6Streams(t *testing.T) {
	var jobs []applySim
	for i := range 30 {
		streams := []string{fmt.Sprintf("s%d", i%6)}
		if i%4 == 3 { // some jobs link two streams
			streams = append(streams, fmt.Sprintf("s%d", (i+2)%6))
		}
		jobs = append(jobs, applySim{project: fmt.Sprintf("p%02d", i), streams: streams, d: 40 * time.Millisecond})
	}
	q, _ := newApplyTestQueue(t, "p1")
	rec := runApplySims(t, q, jobs)
	makespan := rec.check(t, len(jobs))
	serial := time.Duration(len(jobs)) * 40 * time.Millisecond
	cp := applyCriticalPath(jobs)
	t.Logf("makespan %s, critical path %s, serial sum %s, at most %d jobs at once", makespan, cp, serial, rec.peak)
	require.GreaterOrEqual(t, rec.peak, 2, "jobs of different streams run at the same time")
}
