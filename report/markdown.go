package report

import (
	"fmt"
	"strings"
)

// limits bounds how much of each long list a rendering shows; -1 means all.
type limits struct {
	changes, resources, warnings, violations int
}

func allows(n, shown int) bool { return n < 0 || shown < n }

// Markdown renders the report as the body of a pull-request comment section, at
// most maxChars characters (MaxCommentChars when maxChars <= 0). When the whole
// report does not fit, the raw resource changes go first, then rows of the long
// lists, each cut said in a truncation note.
func (r *Report) Markdown(maxChars int) string {
	if maxChars <= 0 {
		maxChars = MaxCommentChars
	}
	l := limits{changes: -1, resources: -1, warnings: -1, violations: -1}
	out := r.markdown(l)
	if len(out) <= maxChars {
		return out
	}
	l.resources = 0
	lists := []struct {
		limit *int
		total int
	}{
		{&l.changes, len(r.Changes())},
		{&l.warnings, len(r.Decision.Warnings)},
		{&l.violations, len(r.Decision.Violations)},
	}
	for _, list := range lists {
		out = r.markdown(l)
		for len(out) > maxChars {
			n := *list.limit
			if n < 0 {
				n = list.total
			}
			if n == 0 {
				break
			}
			*list.limit = n / 2
			out = r.markdown(l)
		}
		if len(out) <= maxChars {
			return out
		}
	}
	// Even the summary does not fit (absurdly long names): cut on a line boundary.
	cut := strings.LastIndex(out[:maxChars-200], "\n")
	if cut < 0 {
		cut = maxChars - 200
	}
	return out[:cut] + "\n\n_…report truncated to fit GitHub's comment limit; run `shardgate plan` for the whole report._\n"
}

func (r *Report) markdown(l limits) string {
	var b strings.Builder
	d := r.Decision
	icon := "✅"
	if !d.Allowed {
		icon = "❌"
	}
	if r.Project != "" {
		fmt.Fprintf(&b, "### %s Project %s\n\n", icon, code(r.Project))
	}
	fmt.Fprintf(&b, "%s **%s**\n\n", icon, escape(r.Summary()))
	r.coordinatorLine(&b)

	changes := r.Changes()
	if len(changes) > 0 {
		b.WriteString("| Stream | Group | Action | Shards | Note |\n|---|---|---|---|---|\n")
		shown := 0
		for _, c := range changes {
			if !allows(l.changes, shown) {
				break
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", cell(c.StreamPrefix), cell(c.ConsumerGroup),
				string(c.Action), shardsCell(c), tableText(note(c)))
			shown++
		}
		truncated(&b, len(changes)-shown, "coordinator change")
		b.WriteString("\n")
	}

	if len(d.Violations) > 0 {
		b.WriteString("#### Violations\n\n")
		shown := 0
		for _, v := range d.Violations {
			if !allows(l.violations, shown) {
				break
			}
			title := v.Title
			if title == "" {
				title = r.rule(v.Rule).Title
			}
			if title == "" {
				title = v.Rule
			}
			fmt.Fprintf(&b, "- **%s** (%s)%s: %s\n  %s\n", escape(title), code(v.Rule), where(v.StreamPrefix, v.ConsumerGroup),
				escape(v.Message), r.resolution(v, code, escape))
			shown++
		}
		truncated(&b, len(d.Violations)-shown, "violation")
		b.WriteString("\n")
	}
	if len(d.Warnings) > 0 {
		b.WriteString("#### Warnings\n\n")
		shown := 0
		for _, w := range d.Warnings {
			if !allows(l.warnings, shown) {
				break
			}
			fmt.Fprintf(&b, "- %s%s: %s\n", code(w.Rule), where(w.StreamPrefix, w.ConsumerGroup), escape(w.Message))
			shown++
		}
		truncated(&b, len(d.Warnings)-shown, "warning")
		b.WriteString("\n")
	}
	r.exceptionsMarkdown(&b)
	r.lockWaitsMarkdown(&b)
	r.resourcesMarkdown(&b, l)
	return strings.TrimRight(b.String(), "\n") + "\n"
}

func (r *Report) coordinatorLine(b *strings.Builder) {
	c := r.Coordinator
	switch {
	case !c.Consulted:
	case c.Reachable:
		b.WriteString("Live coordinator state was read and taken into account.\n\n")
	default:
		fmt.Fprintf(b, "⚠️ **The coordinator could not be reached**: %s. The policy fails closed.\n\n", escape(c.Error))
	}
}

func (r *Report) exceptionsMarkdown(b *strings.Builder) {
	d := r.Decision
	if len(d.ExceptionsApplied) > 0 {
		b.WriteString("#### Exceptions applied\n\n")
		for _, e := range d.ExceptionsApplied {
			fmt.Fprintf(b, "- %s%s waives %s%s: %s\n", code(e.Label), by(e.Actor), code(e.Rule),
				where(e.StreamPrefix, e.ConsumerGroup), escape(e.Message))
		}
		b.WriteString("\n")
	}
	if len(d.AttestationsUsed) > 0 {
		b.WriteString("#### Producer-quiesce attestations used\n\n")
		for _, a := range d.AttestationsUsed {
			fmt.Fprintf(b, "- %s%s, valid until %s\n", code(a.StreamPrefix), by(a.Actor), a.ExpiresAt.UTC().Format("2006-01-02 15:04 MST"))
		}
		b.WriteString("\n")
	}
	if len(d.LabelsNotCounted) > 0 {
		b.WriteString("#### Labels not counted\n\n")
		for _, l := range d.LabelsNotCounted {
			fmt.Fprintf(b, "- %s%s: %s\n", code(l.Name), by(l.Actor), escape(l.Reason))
		}
		b.WriteString("\n")
	}
}

func (r *Report) lockWaitsMarkdown(b *strings.Builder) {
	if len(r.LockWaits) == 0 {
		return
	}
	b.WriteString("#### Terraform state locks waited on\n\n")
	for _, w := range r.LockWaits {
		fmt.Fprintf(b, "- lock %s held by %s for %s since %s: waited %.0fs\n", code(w.ID), code(w.Who), code(w.Operation),
			w.Created.UTC().Format("2006-01-02 15:04:05 MST"), w.WaitedSeconds)
	}
	b.WriteString("\n")
}

func (r *Report) resourcesMarkdown(b *strings.Builder, l limits) {
	if r.ChangeSet == nil || len(r.ChangeSet.Resources) == 0 {
		return
	}
	res := r.ChangeSet.Resources
	fmt.Fprintf(b, "<details><summary>Raw resource changes (%d)</summary>\n\n```\n", len(res))
	shown := 0
	for _, rc := range res {
		if !allows(l.resources, shown) {
			break
		}
		reason := ""
		if rc.ActionReason != "" {
			reason = " (" + rc.ActionReason + ")"
		}
		fmt.Fprintf(b, "# %s: %s%s\n", fence(rc.Address), strings.Join(rc.Actions, ", "), reason)
		for _, d := range rc.Diff {
			fmt.Fprintf(b, "    %s\n", fence(d))
		}
		shown++
	}
	b.WriteString("```\n")
	truncated(b, len(res)-shown, "resource change")
	b.WriteString("\n</details>\n")
}

func truncated(b *strings.Builder, omitted int, noun string) {
	if omitted > 0 {
		fmt.Fprintf(b, "\n_…%s not shown to stay under GitHub's comment limit; run `shardgate plan` or see the check run for all of them._\n", plural(omitted, noun))
	}
}

func where(stream, group string) string {
	switch {
	case stream != "" && group != "":
		return " on " + code(stream+"/"+group)
	case stream != "":
		return " on stream " + code(stream)
	}
	return ""
}

func by(actor string) string {
	if actor == "" {
		return ""
	}
	return " by @" + escape(actor)
}

// code renders s as an inline code span that no content can break out of.
func code(s string) string {
	// A literal HTML comment opener is broken up so content can never carry the
	// hidden marker that identifies shardgate's own comment.
	s = codeReplacer.Replace(s)
	if s == "" {
		return "` `"
	}
	if strings.Contains(s, "`") {
		return "`` " + strings.ReplaceAll(s, "``", "` `") + " ``"
	}
	return "`" + s + "`"
}

// cell is a code span safe inside a table row.
func cell(s string) string { return strings.ReplaceAll(code(s), "|", "\\|") }

// escape makes plain text inert in markdown: no HTML, no links, no line breaks.
func escape(s string) string { return textReplacer.Replace(s) }

var (
	codeReplacer = strings.NewReplacer("\n", " ", "\r", " ", "<!--", "< !--", "</", "< /")
	textReplacer = strings.NewReplacer("\n", " ", "\r", " ", "&", "&amp;", "<", "&lt;",
		"[", "\\[", "]", "\\]", "`", "\\`", "*", "\\*", "|", "\\|")
)

func tableText(s string) string { return escape(s) }

// fence keeps a line inside a ``` block from closing it.
func fence(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "```", "'''"), "\n", " ")
}
