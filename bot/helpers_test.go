package bot

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/webhook"
	"github.com/shardgate/shardgate/store"
)

const testSecret = "webhook-secret"

// withHandler puts h in the place of the server's handlers of the events h
// names.
func withHandler(h webhook.EventHandler) Option {
	return func(s *Server) { s.replaced = append(s.replaced, h) }
}

// enqueue queues a pull_request delivery per id and returns the job ids.
func enqueue(t *testing.T, st store.Store, ids ...string) []string {
	var jobIDs []string
	for _, id := range ids {
		j := &store.Job{DeliveryID: id, Kind: webhook.JobKindEvent, Event: "pull_request", Payload: []byte(`{}`)}
		require.NoError(t, st.Enqueue(context.Background(), j, 0))
		jobIDs = append(jobIDs, j.ID)
	}
	return jobIDs
}

// callsSince counts the fake GitHub's requests from the before-th on, by
// route (ids and shas folded).
func callsSince(h *harness, before int) map[string]int {
	calls := map[string]int{}
	for _, r := range h.gh.Requests()[before:] {
		calls[route(r)]++
	}
	return calls
}

// checkRunNames counts the repository's check runs by name.
func checkRunNames(h *harness) map[string]int {
	n := map[string]int{}
	for _, c := range h.gh.CheckRuns(owner, repoName) {
		n[c.Name]++
	}
	return n
}
