package report

import (
	"fmt"
	"strings"

	"github.com/shardgate/shardgate/internal/mdtext"
)

// Text renders the report for a terminal: the verdict, the changes, and every
// finding with how to resolve it. Plan-derived text is sanitized (Plain): a name
// can neither send terminal escapes nor start a line of its own.
func (r *Report) Text() string {
	r = r.shown()
	var b strings.Builder
	d := r.Decision
	if r.Project != "" {
		fmt.Fprintf(&b, "Project %s\n", mdtext.Sanitize(r.Project))
	}
	fmt.Fprintf(&b, "%s\n", r.Summary())
	if r.incomplete() {
		fmt.Fprintf(&b, "\nIncomplete plan: %s\n", incompleteNote)
	}
	c := r.Coordinator
	if c.Consulted && !c.Reachable {
		fmt.Fprintf(&b, "\nThe coordinator could not be reached: %s. The policy fails closed.\n", mdtext.Sanitize(c.Error))
	}
	r.changesText(&b)
	r.othersText(&b)
	if len(d.Violations) > 0 {
		b.WriteString("\nViolations:\n")
		for _, v := range d.Violations {
			fmt.Fprintf(&b, "  [%s]%s %s\n    %s\n", mdtext.Sanitize(v.Rule), plainWhere(v.StreamPrefix, v.ConsumerGroup, v.Address), mdtext.Sanitize(v.Message), r.Resolution(v))
		}
	}
	if len(d.Warnings) > 0 {
		b.WriteString("\nWarnings:\n")
		for _, w := range d.Warnings {
			fmt.Fprintf(&b, "  [%s]%s %s\n", mdtext.Sanitize(w.Rule), plainWhere(w.StreamPrefix, w.ConsumerGroup, w.Address), mdtext.Sanitize(w.Message))
		}
	}
	r.exceptionsText(&b)
	if len(r.LockWaits) > 0 {
		b.WriteString("\nTerraform state locks waited on:\n")
		for _, w := range r.LockWaits {
			fmt.Fprintf(&b, "  %s held by %s for %s since %s: waited %.0fs\n", mdtext.Sanitize(w.ID), mdtext.Sanitize(w.Who), mdtext.Sanitize(w.Operation),
				w.Created.UTC().Format("2006-01-02 15:04:05 MST"), w.WaitedSeconds)
		}
	}
	return b.String()
}

func (r *Report) changesText(b *strings.Builder) {
	rows := r.rows()
	if len(rows) == 0 {
		return
	}
	multi := multiCoordinator(rows)
	b.WriteString("\nCoordinator changes:\n")
	for _, ch := range rows {
		action := string(ch.Action)
		if drifted(ch) {
			action = "drift"
		}
		fmt.Fprintf(b, "  %-9s %s/%s  shards %s", mdtext.Sanitize(action), mdtext.Sanitize(ch.StreamPrefix), mdtext.Sanitize(ch.ConsumerGroup), shardsCell(ch, plainStyle))
		if n := note(ch, plainStyle, multi); n != "" {
			fmt.Fprintf(b, "  (%s)", n)
		}
		fmt.Fprintf(b, "\n            %s\n", mdtext.Sanitize(ch.Address))
	}
}

func (r *Report) othersText(b *strings.Builder) {
	others := r.OtherChanges()
	if len(others) == 0 {
		return
	}
	fmt.Fprintf(b, "\nOther resources: %s\n", mdtext.Sanitize(otherCounts(others)))
	for _, o := range others {
		reason := ""
		if o.ActionReason != "" {
			reason = " (" + mdtext.Sanitize(o.ActionReason) + ")"
		}
		fmt.Fprintf(b, "  %-9s %s%s\n", mdtext.Sanitize(otherAction(o.Actions)), mdtext.Sanitize(o.Address), reason)
	}
}

func (r *Report) exceptionsText(b *strings.Builder) {
	d := r.Decision
	if len(d.ExceptionsApplied) > 0 {
		b.WriteString("\nExceptions applied:\n")
		for _, e := range d.ExceptionsApplied {
			fmt.Fprintf(b, "  %s waives [%s]%s %s\n", mdtext.Sanitize(e.Label), mdtext.Sanitize(e.Rule), plainWhere(e.StreamPrefix, e.ConsumerGroup, ""), mdtext.Sanitize(e.Message))
		}
	}
	if len(d.AttestationsUsed) > 0 {
		b.WriteString("\nProducer-quiesce attestations used:\n")
		for _, a := range d.AttestationsUsed {
			fmt.Fprintf(b, "  %s by %s, valid until %s\n", mdtext.Sanitize(a.StreamPrefix), mdtext.Sanitize(stripMentions(a.Actor)), a.ExpiresAt.UTC().Format("2006-01-02 15:04 MST"))
		}
	}
	if len(d.LabelsNotCounted) > 0 {
		b.WriteString("\nLabels not counted:\n")
		for _, l := range d.LabelsNotCounted {
			fmt.Fprintf(b, "  %s: %s\n", mdtext.Sanitize(l.Name), mdtext.Sanitize(l.Reason))
		}
	}
}

func plainWhere(stream, group, address string) string {
	switch {
	case stream != "" && group != "":
		return " " + mdtext.Sanitize(stream+"/"+group) + ":"
	case stream != "":
		return " stream " + mdtext.Sanitize(stream) + ":"
	case address != "":
		return " " + mdtext.Sanitize(address) + ":"
	}
	return ""
}
