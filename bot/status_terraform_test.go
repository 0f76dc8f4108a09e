package bot

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/drift"
	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/bot/statuspage"
	"github.com/shardgate/shardgate/store/applyqueue"
)

const statusToken = "status-token-for-the-bot-tests"

// statusGet reads a page of the status listener with the token.
func statusGet(t *testing.T, srv *Server, path string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+srv.statusAddr+path, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+statusToken)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// The plan's and the apply's terraform output reach the status page's live
// logs, and the page shows the apply with its merge commit and request ids.
func TestStatusPageShowsThePlansAndAppliesOfTheService(t *testing.T) {
	h := newHarnessBase(t)
	h.cfg.Status = serverconfig.StatusConfig{Listen: "127.0.0.1:0", Token: serverconfig.NewSecret(statusToken)}
	h.start()
	stop, err := h.srv.startStatus()
	require.NoError(t, err)
	t.Cleanup(stop)

	pr := h.openPR("new-group", with(baseGroups, map[string]int{"clicks/etl": 3}))
	plans := h.srv.liveLogs.Running()
	require.Empty(t, plans, "the plan's log ended with it")
	planLog, ok := h.srv.liveLogs.Get("plan-1")
	require.True(t, ok)
	planText := strings.Join(planLog.Read(0).Lines, "\n")
	require.Contains(t, planText, "Plan: 1 to add, 0 to change, 0 to destroy.")
	require.Contains(t, planText, `module.stream_group["clicks/etl"]`)

	sha := h.merge(pr, approver)
	jobs := h.waitApplies(pr)
	require.Len(t, jobs, 1)
	require.Equal(t, applyqueue.Applied, jobs[0].State, jobs[0].Reason)
	applyLog, ok := h.srv.liveLogs.Get(statuspage.ApplyLogID(jobs[0].Seq, jobs[0].Attempt))
	require.True(t, ok)
	applyText := strings.Join(applyLog.Read(0).Lines, "\n")
	require.Contains(t, applyText, "Apply complete! Resources: 1 added, 0 changed, 0 destroyed.")
	require.True(t, applyLog.Read(0).Ended)

	five := 5
	require.NoError(t, drift.NewStore(h.srv.store).Put(context.Background(), &drift.Record{Repo: "acme/streams", Project: "streams",
		Status: drift.StatusDrifted, Issue: 7, Groups: []drift.Group{{StreamPrefix: "clicks", ConsumerGroup: "etl", Desired: 3, Live: &five, Delta: 2}}}))
	code, body := statusGet(t, h.srv, "/")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "No apply is queued or running.")
	require.Contains(t, body, `<span class="state applied">applied</span>`)
	require.Contains(t, body, sha[:12])
	require.Contains(t, body, "<code>shardgate-streams-pr1-1-1</code>", "the apply's coordinator request ids, the broker's")
	require.Contains(t, body, "clicks/etl: desired 3, live 5 (&#43;2)", "the drift checks' records")
	require.Contains(t, body, "/acme/streams/issues/7\"", "the drift issue linked on the configured GitHub")
	code, events := statusGet(t, h.srv, "/jobs/"+statuspage.ApplyLogID(jobs[0].Seq, jobs[0].Attempt)+"/log")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, events, "data: module.stream_group[\"clicks/etl\"].terraform_data.stream_group: Creation complete")
	require.Contains(t, events, "event: end")
	for _, served := range []string{body, events, planText, applyText} {
		require.NotContains(t, served, statusToken)
		require.NotContains(t, served, h.cfg.PrivateKey.Reveal()[40:60])
	}

	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://"+h.srv.statusAddr+"/", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
}
