// Package livelog keeps the terraform output of the jobs this process runs,
// for the status page to stream while they run: a bounded buffer per job
// (the newest bytes, whole lines), readers that replay it and then follow,
// the state lock a job waits on, and a bounded number of jobs, the oldest
// evicted first. Every line is redacted with the server's secrets before it
// is kept (the runner has already removed the job's own). The logs live in
// the process that runs the job: with several replicas, each shows its own.
package livelog

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/redact"
	"github.com/shardgate/shardgate/terraform/runner"
)

// Bounds of the kept output.
const (
	// DefaultJobs is how many jobs' logs are kept, running or ended.
	DefaultJobs = 64
	// DefaultBytes is how much output is kept per job (the newest).
	DefaultBytes = 256 << 10
	// MaxLine is the longest line kept whole: a longer one is cut there.
	MaxLine = 16 << 10
)

// Kind is what a job does.
type Kind string

const (
	KindPlan  Kind = "plan"
	KindApply Kind = "apply"
)

// Info says what a job is, for the page.
type Info struct {
	ID      string
	Kind    Kind
	Ref     pullreq.Ref
	Project string
	// SHA is the head commit planned, or the merge commit applied.
	SHA string
	// Seq is the apply job's (applyqueue.Job.Seq); empty for plans.
	Seq     string
	Started time.Time
}

// LockWait is the state lock a running job waits on.
type LockWait struct {
	ID, Who, Operation string
	Created            time.Time
	Waited             time.Duration
	Attempt            int
	Since              time.Time
}

// Hub holds the logs of the recent jobs. It is safe for concurrent use.
type Hub struct {
	maxBytes int
	redactor *redact.Redactor
	now      func() time.Time
	jobs     *lru.Cache[string, *Log]
	// seq numbers the jobs started without an id of their own.
	seq atomic.Uint64
}

// NewHub keeps the output of up to jobs jobs (DefaultJobs when not
// positive), bytes each (DefaultBytes when not positive), redacted with r.
// now is the clock (time.Now when nil).
func NewHub(jobs, bytes int, r *redact.Redactor, now func() time.Time) *Hub {
	if jobs <= 0 {
		jobs = DefaultJobs
	}
	if bytes <= 0 {
		bytes = DefaultBytes
	}
	if now == nil {
		now = time.Now
	}
	// An evicted log ends, so its readers stop following it.
	cache, _ := lru.NewWithEvict[string, *Log](jobs, func(_ string, l *Log) { l.Close() })
	return &Hub{maxBytes: bytes, redactor: r, now: now, jobs: cache}
}

// Start begins the log of a job and returns it: write terraform's output to
// it and Close it when the job ends. A log of the same id is replaced; a
// job without an id gets "<kind>-<n>".
func (h *Hub) Start(info Info) *Log {
	if info.ID == "" {
		info.ID = fmt.Sprintf("%s-%d", info.Kind, h.seq.Add(1))
	}
	if info.Started.IsZero() {
		info.Started = h.now()
	}
	l := &Log{info: info, max: h.maxBytes, redactor: h.redactor, now: h.now, changed: make(chan struct{})}
	if old, ok := h.jobs.Peek(info.ID); ok {
		old.Close()
	}
	h.jobs.Add(info.ID, l)
	return l
}

// StartOn begins a job's live log on hub and returns it with the function
// that ends it; without a hub (no status page) there is none, and the writer
// is a nil interface, as runner.JobConfig.Output wants.
func StartOn(hub *Hub, info Info) (io.Writer, func()) {
	if hub == nil {
		return nil, func() {}
	}
	l := hub.Start(info)
	return l, l.Close
}

// Get returns the log of job id, if it is still kept.
func (h *Hub) Get(id string) (*Log, bool) { return h.jobs.Peek(id) }

// Running returns the jobs whose logs have not ended, oldest first.
func (h *Hub) Running() []Snapshot {
	var out []Snapshot
	for _, l := range h.jobs.Values() {
		if s := l.Snapshot(); !s.Ended {
			out = append(out, s)
		}
	}
	slices.SortStableFunc(out, func(a, b Snapshot) int { return a.Info.Started.Compare(b.Info.Started) })
	return out
}

// Snapshot is a log's state at one moment.
type Snapshot struct {
	Info     Info
	Ended    bool
	LockWait *LockWait
}

// Log is one job's output: an io.Writer for terraform's stdout and stderr.
type Log struct {
	info     Info
	max      int
	redactor *redact.Redactor
	now      func() time.Time

	mu      sync.Mutex
	partial []byte // the line being written
	buf     []byte // whole lines, the newest max bytes
	start   int64  // the offset of buf[0] in the whole output
	ended   bool
	wait    *LockWait
	// changed is closed (and replaced) at every change: readers wait on it.
	changed chan struct{}
}

// Info says what the job is.
func (l *Log) Info() Info { return l.info }

// Write keeps p's whole lines, redacted; a partial line waits for its end.
func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended {
		return len(p), nil
	}
	l.partial = append(l.partial, p...)
	grew := false
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 && len(l.partial) < MaxLine {
			break
		}
		n := i + 1
		if i < 0 || i >= MaxLine {
			n = MaxLine
		}
		l.keep(l.partial[:n])
		l.partial = l.partial[n:]
		grew = true
	}
	l.partial = slices.Clip(l.partial)
	if grew {
		l.notify()
	}
	return len(p), nil
}

// keep appends one line, redacted, dropping the oldest lines past max.
// The caller holds mu.
func (l *Log) keep(line []byte) {
	text := l.redactor.Redact(string(bytes.TrimRight(line, "\r\n")))
	l.buf = append(append(l.buf, text...), '\n')
	if over := len(l.buf) - l.max; over > 0 {
		cut := over
		if i := bytes.IndexByte(l.buf[over:], '\n'); i >= 0 {
			cut = over + i + 1 // drop whole lines only
		}
		cut = min(cut, len(l.buf))
		l.buf = append(l.buf[:0], l.buf[cut:]...)
		l.start += int64(cut)
	}
}

func (l *Log) notify() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// StateLockWait records the state lock the job waits on (runner.LockWaitSink);
// nil when the wait is over.
func (l *Log) StateLockWait(w *runner.LockWait) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if w == nil {
		l.wait = nil
	} else {
		l.wait = &LockWait{ID: w.Lock.ID, Who: w.Lock.Who, Operation: w.Lock.Operation, Created: w.Lock.Created,
			Waited: w.Waited, Attempt: w.Attempt, Since: l.now().Add(-w.Waited)}
	}
	l.notify()
}

// Close ends the log: a partial last line is kept, readers get the end.
func (l *Log) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended {
		return
	}
	if len(l.partial) > 0 {
		l.keep(l.partial)
		l.partial = nil
	}
	l.ended, l.wait = true, nil
	l.notify()
}

// Snapshot returns the log's state now.
func (l *Log) Snapshot() Snapshot {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := Snapshot{Info: l.info, Ended: l.ended}
	if l.wait != nil {
		w := *l.wait
		s.LockWait = &w
	}
	return s
}

// Chunk is what a reader gets from one Read.
type Chunk struct {
	// Lines are whole lines (without their newline) from the asked offset.
	Lines []string
	// Next is the offset to read from next time.
	Next int64
	// Skipped says the asked offset had been dropped already (the reader
	// fell behind the kept bytes): Lines start at the oldest kept line.
	Skipped bool
	// Ended says the job is over and Lines hold the rest of its output.
	Ended bool
	// Changed is closed at the log's next change: wait on it, then Read again.
	Changed <-chan struct{}
}

// Read returns the kept lines from offset off (0: from the start).
func (l *Log) Read(off int64) Chunk {
	l.mu.Lock()
	defer l.mu.Unlock()
	end := l.start + int64(len(l.buf))
	c := Chunk{Next: end, Ended: l.ended, Changed: l.changed}
	if off < l.start {
		c.Skipped = off > 0 || l.start > 0
		off = l.start
	}
	if off >= end {
		return c
	}
	data := string(l.buf[off-l.start:])
	for line := range strings.SplitSeq(strings.TrimSuffix(data, "\n"), "\n") {
		c.Lines = append(c.Lines, line)
	}
	return c
}
