package drift

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/shardgate/shardgate/internal/loop"
)

// JitterFraction is the most a scheduled check is delayed past its interval,
// as a fraction of it (a random part of up to 10%), so that repositories seen
// together are not all checked together, nor every replica's at once.
const JitterFraction = 10

// maxTick is the longest wait between two looks at what is due.
const maxTick = time.Minute

// Scheduler runs the drift checks of the known repositories every Interval
// plus jitter. Which check is due lives in the store (Repo.NextCheck, claimed
// atomically), so replicas sharing a store run each check once and a restart
// keeps the schedule. Checks run one at a time.
type Scheduler struct {
	Store    Store
	Interval time.Duration
	Now      func() time.Time
	// Jitter returns a random duration in [0, n); nil: math/rand.
	Jitter func(n time.Duration) time.Duration
	// Check runs the drift check of every project of a repository.
	Check func(ctx context.Context, r Repo) error
	// Paused, when set and true, skips a pass (the store is unavailable).
	Paused func() bool
	Log    *logrus.Entry

	bg *loop.Background
}

// next is when a check claimed at now is due again.
func (s *Scheduler) next(now time.Time) time.Time {
	jitter := s.Jitter
	if jitter == nil {
		jitter = func(n time.Duration) time.Duration {
			if n <= 0 {
				return 0
			}
			return time.Duration(rand.Int64N(int64(n)))
		}
	}
	return now.Add(s.Interval + jitter(s.Interval/JitterFraction))
}

// Pass runs every check that is due now, one at a time, and says how many it
// ran. A check's failure is logged; the next is still run.
func (s *Scheduler) Pass(ctx context.Context) int {
	if s.Interval <= 0 || (s.Paused != nil && s.Paused()) {
		return 0
	}
	repos, err := s.Store.Repos(ctx)
	if err != nil {
		s.Log.WithError(err).Error("drift: list the known repositories")
		return 0
	}
	ran := 0
	for _, r := range repos {
		if ctx.Err() != nil {
			break
		}
		now := s.Now()
		claimed, err := s.Store.ClaimDue(ctx, r.Owner, r.Name, now, s.next(now))
		if err != nil {
			s.Log.WithError(err).WithField("repo", r.FullName()).Error("drift: claim a scheduled check")
			continue
		}
		if !claimed {
			continue
		}
		ran++
		if err := s.Check(ctx, r); err != nil && ctx.Err() == nil {
			s.Log.WithError(err).WithField("repo", r.FullName()).Error("drift: scheduled check failed")
		}
	}
	return ran
}

// Start runs a pass every tick (a tenth of Interval, 1s to 1m) until Close: off when Interval
// is not positive.
func (s *Scheduler) Start(ctx context.Context) {
	if s.Interval <= 0 {
		return
	}
	tick := min(max(s.Interval/JitterFraction, time.Second), maxTick)
	s.bg = loop.Start(ctx, tick, nil, func(ctx context.Context) { s.Pass(ctx) })
}

// Close stops the passes and waits for a running check to end.
func (s *Scheduler) Close() { s.bg.Stop() }
