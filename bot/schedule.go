package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/shardgate/shardgate/bot/prcommand"
	"github.com/shardgate/shardgate/bot/webhook"
	"github.com/shardgate/shardgate/github/pullreq"
)

// mergeGroupPriority is the claim priority of a merge group's job: GitHub's
// merge queue waits on it, so it is claimed before the queued jobs of
// priority 0 (new pull request plans, comments).
const mergeGroupPriority = 1

// cancelPriority is the claim priority of a `/shardgate cancel` comment:
// it ends work that holds a worker (a plan waiting for a state lock).
const cancelPriority = 2

// identify reads a delivery's scheduling identity (webhook.Identifier): its
// installation, the pull request it is about (its lane: the jobs of one pull
// request run one at a time, in order) and, for a command comment that may be
// coalesced, its coalesce key.
func identify(event string, payload []byte) webhook.Identity {
	var p struct {
		prPayload
		Action   string `json:"action"`
		CheckRun struct {
			PullRequests []struct {
				Number int `json:"number"`
			} `json:"pull_requests"`
		} `json:"check_run"`
		Comment struct {
			Body string `json:"body"`
			User struct {
				Login string `json:"login"`
			} `json:"user"`
		} `json:"comment"`
		Sender struct {
			Type string `json:"type"`
		} `json:"sender"`
	}
	if json.Unmarshal(payload, &p) != nil {
		return webhook.Identity{}
	}
	id := webhook.Identity{Installation: p.Installation.ID}
	if event == "merge_group" {
		// The queue waits on it: it goes ahead of the queued pull request
		// plans. It is about no pull request (no lane).
		id.Priority = mergeGroupPriority
		return id
	}
	var ref pullreq.Ref
	ok := false
	switch event {
	case "pull_request", "issue_comment":
		ref, ok = p.ref()
	case "check_run":
		if prs := p.CheckRun.PullRequests; len(prs) > 0 {
			ref, ok = p.refNumbered(prs[0].Number)
		}
	}
	if !ok || ref.Owner == "" {
		return id
	}
	if event == "issue_comment" && onlyCancels(p.Comment.Body) {
		// It stops the pull request's plan: queued in its lane, it would
		// wait for that plan to end.
		id.Priority = cancelPriority
		return id
	}
	id.Lane = ref.String()
	if event == "issue_comment" && p.Action == "created" && p.Sender.Type != "Bot" {
		if cmd := coalescible(p.Comment.Body); cmd != "" && p.Comment.User.Login != "" {
			id.CoalesceKey = id.Lane + " @" + strings.ToLower(p.Comment.User.Login) + " " + cmd
		}
	}
	return id
}

// coalescible returns the normalised command of a comment whose commands may
// run once for many identical comments, or "". The rule: a comment that
// holds exactly one command among help, plan and drift, which read and
// re-check but decide nothing with their author's authority beyond write
// access, and only with comments of the same author (the coalesce key
// names the author), since the write-access check is the author's. Attest
// and apply never coalesce: each records an approver's decision, tied to the
// comment's own time and author. Edited comments never coalesce.
func coalescible(body string) string {
	cmds, err := prcommand.Parse(body)
	if err != nil || len(cmds) != 1 {
		return ""
	}
	switch cmds[0].Verb {
	case prcommand.CmdHelp, prcommand.CmdPlan, prcommand.CmdDrift:
		return "/shardgate " + cmds[0].Verb
	}
	return ""
}

// maxNamedDuplicates bounds the comments a coalesced reply links to.
const maxNamedDuplicates = 20

// duplicates is what a command job answers for besides its own comment:
// the comments coalesced into it. note is added to its first reply, or
// posted alone when the command makes none.
type duplicates struct {
	note string
	said bool
}

type duplicatesKey struct{}

// duplicateComment is what a coalesced delivery says of its comment.
type duplicateComment struct {
	ID      int64  `json:"id"`
	HTMLURL string `json:"html_url"`
}

// duplicateComments reads the comments of the deliveries coalesced into the
// job ctx runs, oldest first.
func duplicateComments(ctx context.Context) []duplicateComment {
	var out []duplicateComment
	for _, d := range webhook.Coalesced(ctx) {
		var p struct {
			Comment duplicateComment `json:"comment"`
		}
		_ = json.Unmarshal(d.Payload, &p)
		out = append(out, p.Comment)
	}
	return out
}

// withDuplicates notes the comments the job's reply answers for too.
func withDuplicates(ctx context.Context, dups []duplicateComment) context.Context {
	if len(dups) == 0 {
		return ctx
	}
	var links []string
	for _, c := range dups {
		switch {
		case len(links) == maxNamedDuplicates:
		case c.HTMLURL != "":
			links = append(links, fmt.Sprintf("[%d](%s)", c.ID, c.HTMLURL))
		default:
			links = append(links, fmt.Sprintf("%d", c.ID))
		}
	}
	note := fmt.Sprintf("This answers %s identical to it too, queued with it and not run again: %s",
		plural(len(dups), "comment"), strings.Join(links, ", "))
	if more := len(dups) - len(links); more > 0 {
		note += fmt.Sprintf(" and %d more", more)
	}
	return context.WithValue(ctx, duplicatesKey{}, &duplicates{note: note + "."})
}

// duplicateNote returns the note for the first reply of a job that stands
// for coalesced comments ("" after that, or without any).
func duplicateNote(ctx context.Context) string {
	d, _ := ctx.Value(duplicatesKey{}).(*duplicates)
	if d == nil || d.said {
		return ""
	}
	d.said = true
	return "\n\n" + d.note
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// onlyCancels says whether a comment's commands are all `/shardgate cancel`.
// Such a comment runs outside its pull request's lane: it touches no
// record the lane's jobs write but the cancel's own, and takes no lock of
// the pull request.
func onlyCancels(body string) bool {
	cmds, err := prcommand.Parse(body)
	if err != nil || len(cmds) == 0 {
		return false
	}
	for _, c := range cmds {
		if c.Verb != prcommand.CmdCancel {
			return false
		}
	}
	return true
}
