// Package phases times the parts of one plan job — checkout, sandbox start,
// terraform, plan parse, live reads, policy, GitHub calls — so that the job's
// log line and shardgate_plan_job_phase_seconds say where its time went.
// A job puts a *Timings in its context (With); each part adds its time to it
// (Add, Start). Code running without one (the CLI, apply jobs) adds nothing.
package phases

import (
	"context"
	"net/http"
	"sort"
	"sync"
	"time"
)

// The phases of a plan job. A call inside a phase that names another (Within)
// counts toward the outer one: the tarball download is checkout, not GitHub.
const (
	Checkout     = "checkout"      // the head commit's tarball, downloaded and unpacked
	SandboxStart = "sandbox_start" // confining and starting each terraform process
	Terraform    = "terraform"     // init, plan and show -json, less their sandbox start
	Parse        = "parse"         // reading terraform's plan JSON into a change set
	LiveReads    = "live_reads"    // the coordinators' live state
	Policy       = "policy"        // the policy's decision
	GitHub       = "github"        // GitHub API calls (their whole round trip)
)

// Names are the phases, in the order of a plan job.
var Names = []string{Checkout, SandboxStart, Terraform, Parse, LiveReads, Policy, GitHub}

// Timings adds up the time of each phase of one job; safe for concurrent use.
type Timings struct {
	mu sync.Mutex
	d  map[string]time.Duration
}

type key struct{}
type withinKey struct{}

// With returns ctx carrying a new Timings, and the Timings.
func With(ctx context.Context) (context.Context, *Timings) {
	t := &Timings{d: map[string]time.Duration{}}
	return context.WithValue(ctx, key{}, t), t
}

// Within returns ctx in which every phase added counts as phase.
func Within(ctx context.Context, phase string) context.Context {
	return context.WithValue(ctx, withinKey{}, phase)
}

// Add adds d to phase of ctx's Timings (to the phase of Within, if any).
func Add(ctx context.Context, phase string, d time.Duration) {
	t, _ := ctx.Value(key{}).(*Timings)
	if t == nil {
		return
	}
	if outer, ok := ctx.Value(withinKey{}).(string); ok {
		phase = outer
	}
	t.mu.Lock()
	t.d[phase] += d
	t.mu.Unlock()
}

// Start starts timing phase; the function it returns adds the time since.
func Start(ctx context.Context, phase string) (stop func()) {
	begin := time.Now()
	return func() { Add(ctx, phase, time.Since(begin)) }
}

// Get is the time of each phase so far (phases never added are absent).
func (t *Timings) Get() map[string]time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]time.Duration, len(t.d))
	for k, v := range t.d {
		out[k] = v
	}
	return out
}

// Millis is Get in whole milliseconds, keyed "<phase>_ms", for a log line.
func (t *Timings) Millis() map[string]any {
	out := map[string]any{}
	got := t.Get()
	keys := make([]string, 0, len(got))
	for k := range got {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out[k+"_ms"] = got[k].Milliseconds()
	}
	return out
}

// Transport adds the time of each request made with a job's context to
// phase (its whole round trip, retries included when next retries).
func Transport(phase string, next http.RoundTripper) http.RoundTripper {
	return roundTripper{phase: phase, next: next}
}

type roundTripper struct {
	phase string
	next  http.RoundTripper
}

func (t roundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	defer Start(r.Context(), t.phase)()
	return t.next.RoundTrip(r)
}
