package drift

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/require"
)

func TestSchedulerRunsEachDueCheckOnceAcrossReplicas(t *testing.T) {
	for name, st := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			clock := newClock()
			ds := NewStore(st)
			for _, n := range []string{"a", "b"} {
				require.NoError(t, ds.SawRepo(ctx, Repo{Installation: 1, Owner: "acme", Name: n, DefaultBranch: "main"}))
			}
			var mu sync.Mutex
			var ran []string
			replica := func() *Scheduler {
				return &Scheduler{Store: ds, Interval: time.Hour, Now: clock.Now, Log: logrus.NewEntry(logrus.New()),
					Jitter: func(n time.Duration) time.Duration { require.Equal(t, 6*time.Minute, n); return 5 * time.Minute },
					Check: func(_ context.Context, r Repo) error {
						mu.Lock()
						defer mu.Unlock()
						ran = append(ran, r.Name+"@"+clock.Now().Format("15:04"))
						return nil
					}}
			}
			one, two := replica(), replica()
			require.Equal(t, 2, one.Pass(ctx))
			require.Equal(t, 0, two.Pass(ctx), "the other replica finds nothing due")
			clock.Advance(time.Hour)
			require.Equal(t, 0, two.Pass(ctx), "not due before the jitter passed")
			clock.Advance(5 * time.Minute)
			require.Equal(t, 2, two.Pass(ctx))
			require.Equal(t, 0, one.Pass(ctx))
			require.Equal(t, []string{"a@09:00", "b@09:00", "a@10:05", "b@10:05"}, ran)

			// An event seeing the repository again keeps its schedule.
			require.NoError(t, ds.SawRepo(ctx, Repo{Installation: 2, Owner: "acme", Name: "a", DefaultBranch: "trunk"}))
			require.Equal(t, 0, one.Pass(ctx))
			r, err := ds.Repo(ctx, "acme", "a")
			require.NoError(t, err)
			require.Equal(t, "trunk", r.DefaultBranch)
			require.Equal(t, t0.Add(2*time.Hour+10*time.Minute), r.NextCheck)
		})
	}
}

func TestSchedulerOff(t *testing.T) {
	s := &Scheduler{Store: NewStore(stores(t)["bolt"]), Now: newClock().Now,
		Check: func(context.Context, Repo) error { t.Fatal("a check ran with drift off"); return nil }}
	require.NoError(t, s.Store.SawRepo(context.Background(), Repo{Installation: 1, Owner: "acme", Name: "a"}))
	require.Zero(t, s.Pass(context.Background()))
	s.Start(context.Background())
	s.Close()
}
