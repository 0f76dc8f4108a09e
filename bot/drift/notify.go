package drift

import (
	"context"
	"fmt"
	"strings"

	"github.com/shardgate/shardgate/bot/server/notify"
	"github.com/shardgate/shardgate/bot/server/serverconfig"
)

// maxSummaryGroups bounds the groups a drift_opened summary names.
const maxSummaryGroups = 5

// notify emits drift_opened (the issue was opened, or reopened) or
// drift_closed for a project's issue. The check's time is in the key: the
// same issue may open again after it was closed.
func (r *Reporter) notify(ctx context.Context, event, owner, repo string, number int, res Result) {
	if r.Notifier == nil {
		return
	}
	full := owner + "/" + repo
	// Built from the configured GitHub, as the status page's links are.
	link := notify.IssueURL(notify.WebURL(r.GitHubAPIURL), full, number)
	summary := fmt.Sprintf("the drift is gone at the head of %s", res.Branch)
	if event == serverconfig.EventDriftOpened {
		summary = driftSummary(res)
	}
	r.Notifier.Emit(ctx, fmt.Sprintf("drift %s/%s#%d@%d", full, res.Project, number, res.CheckedAt.UnixNano()), notify.Event{
		Event: event, Repository: full, Project: res.Project, SHA: res.Commit, Summary: r.redact(summary), URL: link, At: res.CheckedAt,
	})
}

// driftSummary names the groups whose live count differs from the code.
func driftSummary(res Result) string {
	var drifted []string
	for _, g := range res.Groups {
		if g.Delta == 0 {
			continue
		}
		live := "missing"
		if g.Live != nil {
			live = fmt.Sprint(*g.Live)
		}
		drifted = append(drifted, fmt.Sprintf("%s/%s: code %d, live %s", g.StreamPrefix, g.ConsumerGroup, g.Desired, live))
	}
	n := len(drifted)
	if n > maxSummaryGroups {
		drifted = append(drifted[:maxSummaryGroups], fmt.Sprintf("and %d more", n-maxSummaryGroups))
	}
	if n == 0 {
		return fmt.Sprintf("the head of %s differs from the live state", res.Branch)
	}
	return fmt.Sprintf("%d coordinator group(s) differ from the code at the head of %s: %s", n, res.Branch, strings.Join(drifted, "; "))
}
