package drift

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/policy/report"
)

// Label marks shardgate's drift issues; Reporter looks for them by it.
const Label = "shardgate/drift"

// Caps keeping an issue body well under GitHub's 65,536 characters.
const (
	maxGroupRows   = 100
	maxPendingRows = 50
	maxDetailRunes = 8000
	titleCap       = 120
)

// Marker is the hidden first line that identifies a project's drift issue. The
// project name is query-escaped, so no name can end the HTML comment early,
// nor spell another project's marker; a name longer than maxMarkerName bytes
// is named by its SHA-256 instead.
func Marker(project string) string {
	if len(project) > maxMarkerName {
		sum := sha256.Sum256([]byte(project))
		return "<!-- shardgate:drift project-sha256=" + hex.EncodeToString(sum[:]) + " -->"
	}
	return "<!-- shardgate:drift project=" + url.QueryEscape(project) + " -->"
}

// maxMarkerName is the longest project name a marker spells out.
const maxMarkerName = 200

// Title is the issue's title: plain text (GitHub renders no markdown links
// nor mentions there), the project name made safe for one line.
func Title(project string) string {
	name := []rune(report.Plain(project))
	if len(name) > titleCap {
		name = append(name[:titleCap], '…')
	}
	return "shardgate: drift in project " + string(name)
}

// Body renders a drift issue: marker, what differs and since when, how to
// resolve it, what else Terraform would change, and the commit planned. Every
// plan-derived name is escaped (report.Code); sensitive ones show as
// report.Sensitive.
func Body(rec *Record, res Result) string {
	var b strings.Builder
	b.WriteString(Marker(res.Project) + "\n")
	fmt.Fprintf(&b, "## Drift in project %s\n\n", report.Code(res.Project))
	fmt.Fprintf(&b, "shardgate planned %s at %s (the head of %s) on %s and compared every coordinator group's desired shard count with the live one.\n\n",
		report.Code(shortSHA(res.Commit)), report.Code(res.Commit), report.Code(res.Branch), stamp(res.CheckedAt))
	if res.Status == StatusError {
		b.WriteString(errorSection(res))
		if rec != nil && len(rec.Groups) > 0 {
			fmt.Fprintf(&b, "\nThe drift earlier checks found (first seen %s):\n\n", stamp(rec.Since))
			b.WriteString(groupTable(rec.Groups))
		}
		return b.String()
	}
	if len(rec.Groups) > 0 {
		fmt.Fprintf(&b, "**%d coordinator group(s) differ from the code** (drift first seen %s):\n\n", len(rec.Groups), stamp(rec.Since))
		b.WriteString(groupTable(rec.Groups))
		b.WriteString("\n" + resolveText)
	}
	if len(res.Pending) > 0 {
		fmt.Fprintf(&b, "\n**Terraform would change %d resource(s)** on %s (code not applied, or changed outside Terraform):\n\n", len(res.Pending), report.Code(res.Branch))
		b.WriteString(pendingTable(res.Pending))
		b.WriteString("\nMerged code that was never applied, or a resource changed outside Terraform: apply the code through a pull request (the gate judges it), or change the code to what is there.\n")
	}
	b.WriteString("\nshardgate edits this issue at each drift check and closes it when the drift is gone. A drift check never applies anything.\n")
	return b.String()
}

const resolveText = "**How to resolve it**, for each group:\n\n" +
	"- keep the live count: change `shard_count` in the code to the live count and merge it (the plan is then a no-op for the coordinator); or\n" +
	"- restore the code's count: mark the instance for re-creation with `terraform taint 'ADDRESS'` (a change to the state only: nothing is applied), then plan it in a pull request that touches the project; shardgate judges the replace as the scale it is, live → desired, with its policies (shard delta, quiesce attestation), and applies it after merge.\n"

func groupTable(groups []Group) string {
	var b strings.Builder
	b.WriteString("| stream prefix | consumer group | coordinator | desired | live | delta | since | address |\n")
	b.WriteString("| --- | --- | --- | ---: | ---: | ---: | --- | --- |\n")
	for i, g := range groups {
		if i == maxGroupRows {
			fmt.Fprintf(&b, "\n… and %d more.\n", len(groups)-maxGroupRows)
			break
		}
		live := "missing"
		if g.Live != nil {
			live = fmt.Sprint(*g.Live)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %s | %+d | %s | %s |\n", cell(g.StreamPrefix), cell(g.ConsumerGroup), cell(g.Coordinator),
			g.Desired, live, g.Delta, stamp(g.Since), cell(g.Address))
	}
	return b.String()
}

func pendingTable(ps []Pending) string {
	var b strings.Builder
	b.WriteString("| address | action | shards |\n| --- | --- | --- |\n")
	for i, p := range ps {
		if i == maxPendingRows {
			fmt.Fprintf(&b, "\n… and %d more.\n", len(ps)-maxPendingRows)
			break
		}
		action := report.ActionWords(p.Actions)
		if p.Action != "" {
			action = p.Action
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", cell(p.Address), cell(action), counts(p.Before, p.After))
	}
	return b.String()
}

func counts(before, after *int) string {
	if before == nil && after == nil {
		return ""
	}
	s := func(p *int) string {
		if p == nil {
			return "?"
		}
		return fmt.Sprint(*p)
	}
	return s(before) + " → " + s(after)
}

func errorSection(res Result) string {
	s := "**The drift check failed**, so shardgate cannot tell whether this project drifted (this is not drift):\n\n" + report.CodeBlock(res.Error)
	if d := res.Details; d != "" {
		r := []rune(d)
		if len(r) > maxDetailRunes {
			d = string(r[:maxDetailRunes]) + "\n…"
		}
		s += "\n<details><summary>terraform's diagnostics</summary>\n\n" + report.CodeBlock(d) + "\n</details>\n"
	}
	return s
}

// GoneComment is the comment that closes an issue whose drift is gone.
func GoneComment(res Result) string {
	return fmt.Sprintf("The drift is gone: shardgate planned %s (the head of %s) on %s and every coordinator group has the count the code asks for, and Terraform would change nothing. Closing.",
		report.Code(shortSHA(res.Commit)), report.Code(res.Branch), stamp(res.CheckedAt))
}

// FailedComment is the comment a failed check leaves on an open drift issue.
func FailedComment(res Result) string {
	return fmt.Sprintf("The drift check of %s on %s failed; this issue stays as it was (a failed check is not drift, and closes nothing):\n\n%s",
		report.Code(shortSHA(res.Commit)), stamp(res.CheckedAt), report.CodeBlock(res.Error))
}

func cell(s string) string { return strings.ReplaceAll(report.Code(s), "|", `\|`) }

func stamp(t time.Time) string {
	if t.IsZero() {
		return "(unknown)"
	}
	return t.UTC().Format("2006-01-02 15:04 MST")
}

func shortSHA(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

// Markdown renders one result on its own (no history: every drift is "since"
// this check), as the issue body would show it: for `shardgate drift --format
// markdown`.
func Markdown(res Result) string {
	return Body(record(res, nil, 0), res)
}

// Reply is the answer to `/shardgate drift`: it says, per project, what the drift check found and where.
func Reply(actor, branch string, recs []*Record) string {
	if len(recs) == 0 {
		return fmt.Sprintf("@%s, the `.shardgate.yaml` of %s lists no projects: there is nothing to check for drift.", actor, report.Code(branch))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "@%s, drift check of %s at %s:\n\n", actor, report.Code(branch), report.Code(pullreq.ShortSHA(recs[0].Commit)))
	for _, rec := range recs {
		where := ""
		if rec.Issue > 0 {
			where = fmt.Sprintf(" — see #%d", rec.Issue)
		}
		switch rec.Status {
		case StatusDrifted:
			fmt.Fprintf(&b, "- project %s: **drift**, %d group(s) differ from the code, %d change(s) pending%s\n", report.Code(rec.Project), len(rec.Groups), rec.Pending, where)
		case StatusError:
			fmt.Fprintf(&b, "- project %s: the check failed (not drift)%s\n", report.Code(rec.Project), where)
		default:
			fmt.Fprintf(&b, "- project %s: no drift\n", report.Code(rec.Project))
		}
	}
	return b.String()
}
