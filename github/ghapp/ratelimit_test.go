package ghapp

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v60/github"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/internal/fakeclock"
)

// budgetServer answers like GitHub's primary limit: limit requests per
// window, reset by the test; it counts the requests it got while spent.
type budgetServer struct {
	mu         sync.Mutex
	limit, got int
	reset      time.Time
	overspent  int
	retryAfter string // answers every request 403 + Retry-After when set
	refused    int    // requests answered for the secondary limit
}

func (s *budgetServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := w.Header()
	if s.retryAfter != "" {
		s.refused++
		h.Set("Retry-After", s.retryAfter)
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`))
		return
	}
	remaining := s.limit - s.got
	h.Set("X-Ratelimit-Limit", strconv.Itoa(s.limit))
	h.Set("X-Ratelimit-Reset", strconv.FormatInt(s.reset.Unix(), 10))
	h.Set("X-Ratelimit-Resource", "core")
	if remaining <= 0 {
		s.overspent++
		h.Set("X-Ratelimit-Remaining", "0")
		h.Set("X-Ratelimit-Used", strconv.Itoa(s.limit))
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"message":"API rate limit exceeded for installation ID 1.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"}`))
		return
	}
	s.got++
	h.Set("X-Ratelimit-Remaining", strconv.Itoa(remaining-1))
	h.Set("X-Ratelimit-Used", strconv.Itoa(s.got))
	_, _ = w.Write([]byte(`{"id":1}`))
}

func (s *budgetServer) newWindow(limit int, reset time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limit, s.got, s.reset = limit, 0, reset
}

// budgetClients makes go-github clients of installation 7 sharing one
// Budgets on clock. go-github never learns a budget (the transport hides it),
// so its own check, which reads the wall clock, never decides.
func budgetClients(t *testing.T, srv *budgetServer, clock *fakeclock.Clock) (func() *github.Client, *Budgets) {
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	budgets := NewBudgets(clock.Now)
	return func() *github.Client {
		gh := github.NewClient(&http.Client{Transport: &budgetTransport{next: http.DefaultTransport, installationID: 7, budgets: budgets}})
		u, err := gh.BaseURL.Parse(ts.URL + "/")
		require.NoError(t, err)
		gh.BaseURL = u
		return gh
	}, budgets
}

func getIssue(gh *github.Client) error {
	_, _, err := gh.Issues.Get(context.Background(), "acme", "infra", 1)
	return err
}

// The budget is spent: nothing more is sent until the reset, then one
// request learns the new budget while the others wait for its answer.
func TestInstallationClientSendsNothingWhileItsBudgetIsSpent(t *testing.T) {
	clock := fakeclock.New(time.Date(2026, 12, 4, 13, 30, 0, 0, time.UTC))
	reset := clock.Now().Add(35 * time.Minute)
	srv := &budgetServer{}
	srv.newWindow(3, reset)
	client, budgets := budgetClients(t, srv, clock)
	gh := client()
	for i := 0; i < 3; i++ {
		require.NoError(t, getIssue(gh))
	}
	b, ok := budgets.Get(7)
	require.True(t, ok)
	require.Equal(t, Budget{InstallationID: 7, Resource: "core", Limit: 3, Remaining: 0, Used: 3, Reset: reset, Seen: clock.Now()}, b)
	for i := 0; i < 5; i++ {
		err := getIssue(gh)
		until, limit, ok := LimitWait(err, clock.Now())
		require.True(t, ok)
		require.Equal(t, LimitPrimary, limit)
		require.True(t, until.Equal(reset), "waits until the reset: %s", until)
	}
	require.Zero(t, srv.overspent, "no request was sent while the budget was 0")

	clock.Set(reset.Add(time.Second))
	srv.newWindow(3, reset.Add(time.Hour))
	require.Nil(t, budgets.reserve(7), "after the reset one request goes out")
	le := budgets.reserve(7)
	require.NotNil(t, le, "the others wait for the one learning the new budget")
	require.Equal(t, clock.Now().Add(probeWait), le.Until)
	budgets.unprobe(7) // the reserved probe above was never sent
	gh = client()
	require.NoError(t, getIssue(gh))
	b, _ = budgets.Get(7)
	require.Equal(t, 2, b.Remaining)
	require.NoError(t, getIssue(gh), "the new window's budget is spent again")
}

// Another client of the installation (a replica, a human's token) spent the
// budget: GitHub's 403 is read as a wait until the reset, and nothing else is
// sent before it.
func TestAPrimaryLimitAnswerIsAWaitUntilTheReset(t *testing.T) {
	clock := fakeclock.New(time.Date(2026, 12, 4, 13, 30, 0, 0, time.UTC))
	reset := clock.Now().Add(35 * time.Minute)
	srv := &budgetServer{}
	srv.newWindow(0, reset)
	client, _ := budgetClients(t, srv, clock)
	gh := client()
	err := getIssue(gh)
	until, limit, ok := LimitWait(err, clock.Now())
	require.True(t, ok, "%v", err)
	require.Equal(t, LimitPrimary, limit)
	require.True(t, until.Equal(reset))
	require.Error(t, getIssue(gh))
	require.Equal(t, 1, srv.overspent, "only the request that learned the reset")
}

// Whether GitHub's reset has passed is read on the installation's clock,
// never the wall clock: with the clock decades before the real time, the
// spent budget holds until the clock passes the reset; with it decades
// after, a request goes out as soon as it does.
func TestASpentBudgetHoldsUntilTheInjectedClockPassesTheReset(t *testing.T) {
	for _, start := range []time.Time{
		time.Date(2001, 3, 4, 13, 30, 0, 0, time.UTC), // the wall clock is past every reset
		time.Date(2101, 3, 4, 13, 30, 0, 0, time.UTC), // the wall clock is before every reset
	} {
		t.Run(strconv.Itoa(start.Year()), func(t *testing.T) {
			clock := fakeclock.New(start)
			t0 := clock.Now()
			reset := t0.Add(35 * time.Minute)
			srv := &budgetServer{}
			srv.newWindow(1, reset)
			client, _ := budgetClients(t, srv, clock)
			gh := client()
			require.NoError(t, getIssue(gh), "the window's one request")
			for _, wait := range []time.Duration{0, 20 * time.Minute, 35*time.Minute - time.Second} {
				clock.Set(t0.Add(wait))
				err := getIssue(gh)
				until, limit, ok := LimitWait(err, clock.Now())
				require.True(t, ok, "refused locally at +%s: %v", wait, err)
				require.Equal(t, LimitPrimary, limit)
				require.True(t, until.Equal(reset), "until the reset, not %s", until)
			}
			require.Zero(t, srv.overspent, "nothing sent before the reset on the installation's clock")
			clock.Set(reset.Add(time.Second))
			srv.newWindow(5, reset.Add(time.Hour))
			require.NoError(t, getIssue(gh), "the same client sends once the clock passed the reset")
			require.Equal(t, 1, srv.got)
		})
	}
}

func TestASecondaryLimitAnswerIsAWaitForItsRetryAfter(t *testing.T) {
	clock := fakeclock.New(time.Date(2026, 12, 4, 13, 30, 0, 0, time.UTC))
	srv := &budgetServer{retryAfter: "90"}
	client, budgets := budgetClients(t, srv, clock)
	gh := client()
	err := getIssue(gh)
	var le *LimitError
	require.ErrorAs(t, err, &le, "answered as the wait it is, on the installation's clock")
	until, limit, ok := LimitWait(err, clock.Now())
	require.True(t, ok)
	require.Equal(t, LimitSecondary, limit)
	require.Equal(t, clock.Now().Add(90*time.Second), until)

	// Not sent before Retry-After passed on the installation's clock.
	err = getIssue(gh)
	_, limit, ok = LimitWait(err, clock.Now())
	require.True(t, ok)
	require.Equal(t, LimitSecondary, limit)
	require.Equal(t, &LimitError{InstallationID: 7, Limit: LimitSecondary, Until: until}, budgets.reserve(7))
	require.Equal(t, 1, srv.refused)
	clock.Advance(91 * time.Second)
	srv.mu.Lock()
	srv.retryAfter = ""
	srv.mu.Unlock()
	srv.newWindow(10, clock.Now().Add(time.Hour))
	require.NoError(t, getIssue(gh), "the same client sends once the clock passed Retry-After")
	_, ok = budgets.Get(7)
	require.True(t, ok)
}

func TestLimitWaitIgnoresOtherErrors(t *testing.T) {
	for _, err := range []error{errors.New("boom"), &github.ErrorResponse{Response: &http.Response{StatusCode: 403}, Message: "Resource not accessible by integration"}} {
		_, _, ok := LimitWait(err, time.Now())
		require.False(t, ok, "%v", err)
	}
}

// Workers at once share the installation's budget: the requests in flight
// count against it before their answers arrive, so none is sent past it.
func TestConcurrentRequestsDoNotOverspendTheBudget(t *testing.T) {
	clock := fakeclock.New(time.Date(2026, 12, 4, 13, 30, 0, 0, time.UTC))
	srv := &budgetServer{}
	srv.newWindow(6, clock.Now().Add(time.Hour))
	client, _ := budgetClients(t, srv, clock)
	require.NoError(t, getIssue(client())) // learns the budget: 5 left
	var wg sync.WaitGroup
	var mu sync.Mutex
	sent, waited := 0, 0
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := getIssue(client())
			mu.Lock()
			defer mu.Unlock()
			if _, _, ok := LimitWait(err, clock.Now()); ok {
				waited++
				return
			}
			require.NoError(t, err)
			sent++
		}()
	}
	wg.Wait()
	require.Equal(t, 5, sent)
	require.Equal(t, 15, waited)
	require.Zero(t, srv.overspent)
}
