package prreport

import (
	"fmt"
	"slices"
	"strings"

	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/policy/report"
	"github.com/shardgate/shardgate/store/applyqueue"
	"github.com/shardgate/shardgate/store/records"
)

// ApplyStatus summarises a pull request's applies once they have all
// finished, with the projects that wait for a command; "" while one has not
// finished (or there are none).
func ApplyStatus(jobs []*applyqueue.Job, waiting []records.WaitingApply) string {
	waiting = StillWaiting(jobs, waiting)
	if len(jobs) == 0 {
		return ""
	}
	applied, failed, streams := 0, 0, false
	for _, j := range jobs {
		streams = streams || len(j.Streams) > 0
		switch {
		case j.State == applyqueue.Applied:
			applied++
		case j.State == applyqueue.Failed:
			failed++
		default:
			return ""
		}
	}
	wait := ""
	if len(waiting) > 0 {
		wait = fmt.Sprintf(" %s for `/shardgate apply <project>` (see Apply below).", waitingWords(len(waiting)))
	}
	if failed > 0 {
		return fmt.Sprintf("merged; **not applied** (%d of %d projects failed; see Apply below).", failed, len(jobs)) + wait
	}
	if !streams {
		return fmt.Sprintf("merged and applied (%s).", plural(applied, "project")) + wait
	}
	return fmt.Sprintf("merged and applied (%s); the coordinator has converged.", plural(applied, "project")) + wait
}

func waitingWords(n int) string {
	if n == 1 {
		return "1 project waits"
	}
	return fmt.Sprintf("%d projects wait", n)
}

// StillWaiting are the waiting projects that no apply job has taken up yet.
func StillWaiting(jobs []*applyqueue.Job, waiting []records.WaitingApply) []records.WaitingApply {
	var out []records.WaitingApply
	for _, w := range waiting {
		if !slices.ContainsFunc(jobs, func(j *applyqueue.Job) bool { return j.Project == w.Project }) {
			out = append(out, w)
		}
	}
	return out
}

// ApplySection is the comment's Apply section: one line per apply job, then
// one per project that waits for `/shardgate apply <project>` and why;
// blockers says what a queued job waits behind (none: it is starting).
func ApplySection(jobs []*applyqueue.Job, waiting []records.WaitingApply, blockers func(seq string) []applyqueue.Blocker) string {
	waiting = StillWaiting(jobs, waiting)
	if len(jobs) == 0 && len(waiting) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n### Apply\n\n| Project | State | Detail |\n|---|---|---|\n")
	for _, j := range jobs {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", report.Code(j.Project), applyStateText(j.State), applyDetail(j, blockers))
	}
	for _, w := range waiting {
		fmt.Fprintf(&b, "| %s | ⏸️ waits for a command | %s An approver applies it with %s. |\n", report.Code(w.Project), w.Why,
			report.Code(prcommandApply+" "+w.Project))
	}
	return b.String()
}

// prcommandApply is the command that applies a waiting project (prcommand's
// grammar; prreport does not import it).
const prcommandApply = "/shardgate apply"

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
			if b.DependsOn {
				parts = append(parts, dependencyWait(b))
				continue
			}
			if b.Stream == "" {
				parts = append(parts, fmt.Sprintf("waiting behind #%d (%s) on the project's Terraform state", b.Ref.Number, report.Code(b.Project)))
				continue
			}
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

// dependencyWait says that a job waits for the apply of a project it
// depends on (depends_on), and why it still does.
func dependencyWait(b applyqueue.Blocker) string {
	if b.State == applyqueue.Failed {
		return fmt.Sprintf("not applied: it depends on %s (`depends_on`), whose apply failed (%s); it waits until an approver's `/shardgate apply` of %s succeeds",
			report.Code(b.Project), report.Escape(report.FirstLine(b.Reason)), report.Code(b.Project))
	}
	return fmt.Sprintf("waiting for %s to be applied first (`depends_on`)", report.Code(b.Project))
}
