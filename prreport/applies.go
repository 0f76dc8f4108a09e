package prreport

import (
	"fmt"
	"strings"

	"github.com/shardgate/shardgate/applyqueue"
	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/report"
)

// ApplyStatus summarises a pull request's applies once they have all
// finished; "" while one has not (or there are none).
func ApplyStatus(jobs []*applyqueue.Job) string {
	if len(jobs) == 0 {
		return ""
	}
	applied, failed := 0, 0
	for _, j := range jobs {
		switch {
		case j.State == applyqueue.Applied:
			applied++
		case j.State == applyqueue.Failed:
			failed++
		default:
			return ""
		}
	}
	if failed > 0 {
		return fmt.Sprintf("merged; **not applied** (%d of %d projects failed; see Apply below).", failed, len(jobs))
	}
	return fmt.Sprintf("merged and applied (%s); the coordinator has converged.", plural(applied, "project"))
}

// ApplySection is the comment's Apply section: one line per apply job;
// blockers says what a queued job waits behind (none: it is starting).
func ApplySection(jobs []*applyqueue.Job, blockers func(seq string) []applyqueue.Blocker) string {
	if len(jobs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n### Apply\n\n| Project | State | Detail |\n|---|---|---|\n")
	for _, j := range jobs {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", report.Code(j.Project), applyStateText(j.State), applyDetail(j, blockers))
	}
	return b.String()
}

func applyStateText(st applyqueue.State) string {
	switch st {
	case applyqueue.Applied:
		return "✅ applied"
	case applyqueue.Failed:
		return "❌ not applied"
	case applyqueue.Queued:
		return "⏳ queued"
	}
	return "🔄 " + string(st)
}

func applyDetail(j *applyqueue.Job, blockers func(seq string) []applyqueue.Blocker) string {
	return report.Hide(j.Sensitive, applyDetailText(j, blockers))
}

func applyDetailText(j *applyqueue.Job, blockers func(seq string) []applyqueue.Blocker) string {
	switch {
	case j.State == applyqueue.Failed:
		return report.Escape(report.FirstLine(j.Reason)) + " An approver can retry with `/shardgate apply`."
	case j.State == applyqueue.Applied:
		return report.Escape(report.FirstLine(j.Reason))
	case j.State == applyqueue.Queued:
		waits := blockers(j.Seq)
		if len(waits) == 0 {
			return "starting"
		}
		var parts []string
		for _, b := range waits {
			_, prefix := planparse.SplitStreamKey(b.Stream)
			parts = append(parts, fmt.Sprintf("waiting behind #%d (%s) on stream %s", b.Ref.Number, report.Code(b.Project), report.Code(prefix)))
		}
		return strings.Join(parts, "; ")
	}
	return report.Escape(report.FirstLine(j.Progress))
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
