package report

import (
	"fmt"
	"strings"

	"github.com/shardgate/shardgate/internal/mdtext"
	"github.com/shardgate/shardgate/planparse"
)

// limits bounds how much of each long list a rendering shows; -1 means all.
type limits struct {
	changes, others, resources, warnings, violations int
}

var showAll = limits{changes: -1, others: -1, resources: -1, warnings: -1, violations: -1}

func allows(n, shown int) bool { return n < 0 || shown < n }

// full shows every string up to the default caps.
var full = mdWriter{name: nameCap, msg: messageCap}

// Markdown renders the report as the body of a pull-request comment section, at
// most maxChars bytes (so at most as many characters; MaxCommentChars when
// maxChars <= 0). When the whole report does not fit, the raw resource changes
// go first, then rows of the other changes, the coordinator changes, the
// warnings and the violations, each cut said in a truncation note; when even the
// lists' headings do not fit, a compact verdict. It never panics, whatever the
// budget: below a few dozen bytes it is a bare verdict word.
func (r *Report) Markdown(maxChars int) string {
	r = r.shown()
	if maxChars <= 0 {
		maxChars = MaxCommentChars
	}
	l := showAll
	out := r.markdown(l, full)
	if len(out) <= maxChars {
		return out
	}
	l.resources = 0
	fits := func() bool { return len(r.markdown(l, full)) <= maxChars }
	lists := []struct {
		limit *int
		total int
	}{
		{&l.others, len(r.OtherChanges())},
		{&l.changes, len(r.rows())},
		{&l.warnings, len(r.Decision.Warnings)},
		{&l.violations, len(r.Decision.Violations)},
	}
	for _, list := range lists {
		if fitList(list.limit, list.total, fits) {
			return r.markdown(l, full)
		}
	}
	return r.compactMarkdown(maxChars)
}

// fitList sets *limit to the most rows of a list of total that fit, reporting
// whether any number (0 included) does; it leaves 0 when none does.
func fitList(limit *int, total int, fits func() bool) bool {
	*limit = 0
	if !fits() {
		return false
	}
	lo, hi := 0, total // lo fits; every count above hi is known not to
	for lo < hi {
		mid := (lo + hi + 1) / 2
		*limit = mid
		if fits() {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	*limit = lo
	return true
}

// compactMarkdown is the verdict alone, for budgets too small for any list: the
// project heading with its name shortened as far as needed, then without it,
// then the bare verdict.
func (r *Report) compactMarkdown(maxChars int) string {
	icon := r.icon()
	for _, cap := range []int{64, 16, 0} {
		var b strings.Builder
		w := mdWriter{name: cap, msg: cap}
		if r.Project != "" && cap > 0 {
			fmt.Fprintf(&b, "### %s Project %s\n\n", icon, w.code(r.Project))
		}
		fmt.Fprintf(&b, "%s **%s**\n\n", icon, full.text(r.Summary()))
		if r.incomplete() {
			b.WriteString("⚠️ **Incomplete plan.**\n\n")
		}
		b.WriteString("_…report cut to fit; run `shardgate plan` or see the check run for the whole report._\n")
		if b.Len() <= maxChars {
			return b.String()
		}
	}
	if short := icon + " **" + r.verdict() + "**\n"; len(short) <= maxChars {
		return short
	}
	v := r.verdict()
	return v[:min(len(v), maxChars)]
}

func (r *Report) icon() string {
	if r.Decision.Allowed {
		return "✅"
	}
	return "❌"
}

func (r *Report) markdown(l limits, w mdWriter) string {
	var b strings.Builder
	d := r.Decision
	if r.Project != "" {
		fmt.Fprintf(&b, "### %s Project %s\n\n", r.icon(), w.code(r.Project))
	}
	fmt.Fprintf(&b, "%s **%s**\n\n", r.icon(), w.text(r.Summary()))
	if r.incomplete() {
		fmt.Fprintf(&b, "⚠️ **Incomplete plan**: %s\n\n", w.text(incompleteNote))
	}
	r.coordinatorLine(&b, w)
	r.changesMarkdown(&b, l, w)
	r.othersMarkdown(&b, l, w)
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
			fmt.Fprintf(&b, "- %s (%s)%s: %s\n  %s\n", w.bold(title), w.code(v.Rule), where(w, v.StreamPrefix, v.ConsumerGroup, v.Address),
				w.text(v.Message), r.resolution(v, w.style()))
			shown++
		}
		truncated(&b, len(d.Violations)-shown, "violation")
		b.WriteString("\n")
	}
	if len(d.Warnings) > 0 {
		b.WriteString("#### Warnings\n\n")
		shown := 0
		for _, wa := range d.Warnings {
			if !allows(l.warnings, shown) {
				break
			}
			fmt.Fprintf(&b, "- %s%s: %s\n", w.code(wa.Rule), where(w, wa.StreamPrefix, wa.ConsumerGroup, wa.Address), w.text(wa.Message))
			shown++
		}
		truncated(&b, len(d.Warnings)-shown, "warning")
		b.WriteString("\n")
	}
	r.exceptionsMarkdown(&b, w)
	r.lockWaitsMarkdown(&b, w)
	r.resourcesMarkdown(&b, l)
	return strings.TrimRight(b.String(), "\n") + "\n"
}

func (r *Report) coordinatorLine(b *strings.Builder, w mdWriter) {
	c := r.Coordinator
	switch {
	case !c.Consulted:
	case c.Reachable:
		b.WriteString("Live coordinator state was read and taken into account.\n\n")
	default:
		fmt.Fprintf(b, "⚠️ **The coordinator could not be reached**: %s. The policy fails closed.\n\n", w.text(c.Error))
	}
}

func (r *Report) changesMarkdown(b *strings.Builder, l limits, w mdWriter) {
	rows := r.rows()
	if len(rows) == 0 {
		return
	}
	multi := multiCoordinator(rows)
	st := w.tableStyle()
	b.WriteString("| Stream | Group | Action | Shards | Note |\n|---|---|---|---|---|\n")
	shown := 0
	for _, c := range rows {
		if !allows(l.changes, shown) {
			break
		}
		action := string(c.Action)
		if drifted(c) {
			action += " (drift)"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", w.cell(c.StreamPrefix), w.cell(c.ConsumerGroup),
			w.text(action), shardsCell(c, st), note(c, st, multi))
		shown++
	}
	truncated(b, len(rows)-shown, "coordinator change")
	b.WriteString("\n")
}

// othersMarkdown shows the counts of the other resources' changes and, folded,
// the list of them.
func (r *Report) othersMarkdown(b *strings.Builder, l limits, w mdWriter) {
	others := r.OtherChanges()
	if len(others) == 0 {
		return
	}
	fmt.Fprintf(b, "**Other resources:** %s\n\n", w.text(otherCounts(others)))
	fmt.Fprintf(b, "<details><summary>Other resource changes (%d)</summary>\n\n", len(others))
	shown := 0
	for _, o := range others {
		if !allows(l.others, shown) {
			break
		}
		reason := ""
		if o.ActionReason != "" {
			reason = " (" + w.text(o.ActionReason) + ")"
		}
		fmt.Fprintf(b, "- %s: %s%s\n", w.code(o.Address), w.text(otherAction(o.Actions)), reason)
		shown++
	}
	truncated(b, len(others)-shown, "other resource change")
	b.WriteString("\n</details>\n\n")
}

func (r *Report) exceptionsMarkdown(b *strings.Builder, w mdWriter) {
	d := r.Decision
	if len(d.ExceptionsApplied) > 0 {
		b.WriteString("#### Exceptions applied\n\n")
		for _, e := range d.ExceptionsApplied {
			fmt.Fprintf(b, "- %s%s waives %s%s: %s\n", w.code(e.Label), by(w, e.Actor), w.code(e.Rule),
				where(w, e.StreamPrefix, e.ConsumerGroup, ""), w.text(e.Message))
		}
		b.WriteString("\n")
	}
	if len(d.AttestationsUsed) > 0 {
		b.WriteString("#### Producer-quiesce attestations used\n\n")
		for _, a := range d.AttestationsUsed {
			fmt.Fprintf(b, "- %s%s, valid until %s\n", w.code(a.StreamPrefix), by(w, a.Actor), a.ExpiresAt.UTC().Format("2006-01-02 15:04 MST"))
		}
		b.WriteString("\n")
	}
	if len(d.LabelsNotCounted) > 0 {
		b.WriteString("#### Labels not counted\n\n")
		for _, lb := range d.LabelsNotCounted {
			fmt.Fprintf(b, "- %s%s: %s\n", w.code(lb.Name), by(w, lb.Actor), w.text(lb.Reason))
		}
		b.WriteString("\n")
	}
}

func (r *Report) lockWaitsMarkdown(b *strings.Builder, w mdWriter) {
	if len(r.LockWaits) == 0 {
		return
	}
	b.WriteString("#### Terraform state locks waited on\n\n")
	for _, lw := range r.LockWaits {
		fmt.Fprintf(b, "- lock %s held by %s for %s since %s: waited %.0fs\n", w.code(lw.ID), w.code(lw.Who), w.code(lw.Operation),
			lw.Created.UTC().Format("2006-01-02 15:04:05 MST"), lw.WaitedSeconds)
	}
	b.WriteString("\n")
}

func (r *Report) resourcesMarkdown(b *strings.Builder, l limits) {
	if r.ChangeSet == nil || len(r.ChangeSet.Resources) == 0 {
		return
	}
	res := r.ChangeSet.Resources
	var lines []string
	shown := 0
	for _, rc := range res {
		if !allows(l.resources, shown) {
			break
		}
		lines = append(lines, rawResourceLines(rc)...)
		shown++
	}
	fmt.Fprintf(b, "<details><summary>Raw resource changes (%d)</summary>\n\n", len(res))
	if len(lines) > 0 {
		b.WriteString(codeBlockLines(lines))
	}
	truncated(b, len(res)-shown, "resource change")
	b.WriteString("\n</details>\n\n")
}

// rawResourceLines is one raw resource change as lines of a code block.
func rawResourceLines(rc planparse.ResourceChange) []string {
	reason := ""
	if rc.ActionReason != "" {
		reason = " (" + rc.ActionReason + ")"
	}
	lines := []string{fmt.Sprintf("# %s: %s%s", oneLine(rc.Address, nameCap), oneLine(strings.Join(rc.Actions, ", "), nameCap), oneLine(reason, nameCap))}
	for _, d := range rc.Diff {
		lines = append(lines, "    "+oneLine(d, lineCap))
	}
	return lines
}

// oneLine keeps a value on its line inside a code block.
func oneLine(s string, cap int) string { return mdtext.Sanitize(mdtext.CapRunes(s, cap)) }

func truncated(b *strings.Builder, omitted int, noun string) {
	if omitted > 0 {
		fmt.Fprintf(b, "\n_…%s not shown to stay under GitHub's comment limit; run `shardgate plan` or see the check run for all of them._\n", plural(omitted, noun))
	}
}

// where names what a finding is about: the group, else the stream, else the
// resource's address (a finding about another resource has only that).
func where(w mdWriter, stream, group, address string) string {
	switch {
	case stream != "" && group != "":
		return " on " + w.code(stream+"/"+group)
	case stream != "":
		return " on stream " + w.code(stream)
	case address != "":
		return " on " + w.code(address)
	}
	return ""
}

// by names an actor without '@': a report never mentions anyone.
func by(w mdWriter, actor string) string {
	if actor == "" {
		return ""
	}
	return " by " + w.text(stripMentions(actor))
}

// FirstLine is s's first line, trimmed: an error as one line of a report.
func FirstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
