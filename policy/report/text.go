package report

import (
	"fmt"
	"strings"
)

// Text renders the report for a terminal: the verdict, the changes, and every
// finding with how to resolve it. Plan-derived text is sanitized (Plain): a name
// can neither send terminal escapes nor start a line of its own.
func (r *Report) Text() string {
	r = r.shown()
	var b strings.Builder
	d := r.Decision
	if r.Project != "" {
		fmt.Fprintf(&b, "Project %s\n", sanitize(r.Project))
	}
	fmt.Fprintf(&b, "%s\n", r.Summary())
	if r.incomplete() {
		fmt.Fprintf(&b, "\nIncomplete plan: %s\n", incompleteNote)
	}
	c := r.Coordinator
	if c.Consulted && !c.Reachable {
		fmt.Fprintf(&b, "\nThe coordinator could not be reached: %s. The policy fails closed.\n", sanitize(c.Error))
	}
	r.changesText(&b)
	r.othersText(&b)
	if len(d.Violations) > 0 {
		b.WriteString("\nViolations:\n")
		for _, v := range d.Violations {
			fmt.Fprintf(&b, "  [%s]%s %s\n    %s\n", sanitize(v.Rule), plainWhere(v.StreamPrefix, v.ConsumerGroup, v.Address), sanitize(v.Message), r.Resolution(v))
		}
	}
	if len(d.Warnings) > 0 {
		b.WriteString("\nWarnings:\n")
		for _, w := range d.Warnings {
			fmt.Fprintf(&b, "  [%s]%s %s\n", sanitize(w.Rule), plainWhere(w.StreamPrefix, w.ConsumerGroup, w.Address), sanitize(w.Message))
		}
	}
	r.exceptionsText(&b)
	if len(r.LockWaits) > 0 {
		b.WriteString("\nTerraform state locks waited on:\n")
		for _, w := range r.LockWaits {
			fmt.Fprintf(&b, "  %s held by %s for %s since %s: waited %.0fs\n", sanitize(w.ID), sanitize(w.Who), sanitize(w.Operation),
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
		fmt.Fprintf(b, "  %-9s %s/%s  shards %s", sanitize(action), sanitize(ch.StreamPrefix), sanitize(ch.ConsumerGroup), shardsCell(ch, plainStyle))
		if n := note(ch, plainStyle, multi); n != "" {
			fmt.Fprintf(b, "  (%s)", n)
		}
		fmt.Fprintf(b, "\n            %s\n", sanitize(ch.Address))
	}
}

func (r *Report) othersText(b *strings.Builder) {
	others := r.OtherChanges()
	if len(others) == 0 {
		return
	}
	fmt.Fprintf(b, "\nOther resources: %s\n", sanitize(otherCounts(others)))
	for _, o := range others {
		reason := ""
		if o.ActionReason != "" {
			reason = " (" + sanitize(o.ActionReason) + ")"
		}
		fmt.Fprintf(b, "  %-9s %s%s\n", sanitize(otherAction(o.Actions)), sanitize(o.Address), reason)
	}
}

func (r *Report) exceptionsText(b *strings.Builder) {
	d := r.Decision
	if len(d.ExceptionsApplied) > 0 {
		b.WriteString("\nExceptions applied:\n")
		for _, e := range d.ExceptionsApplied {
			fmt.Fprintf(b, "  %s waives [%s]%s %s\n", sanitize(e.Label), sanitize(e.Rule), plainWhere(e.StreamPrefix, e.ConsumerGroup, ""), sanitize(e.Message))
		}
	}
	if len(d.AttestationsUsed) > 0 {
		b.WriteString("\nProducer-quiesce attestations used:\n")
		for _, a := range d.AttestationsUsed {
			fmt.Fprintf(b, "  %s by %s, valid until %s\n", sanitize(a.StreamPrefix), sanitize(stripMentions(a.Actor)), a.ExpiresAt.UTC().Format("2006-01-02 15:04 MST"))
		}
	}
	if len(d.LabelsNotCounted) > 0 {
		b.WriteString("\nLabels not counted:\n")
		for _, l := range d.LabelsNotCounted {
			fmt.Fprintf(b, "  %s: %s\n", sanitize(l.Name), sanitize(l.Reason))
		}
	}
}

func plainWhere(stream, group, address string) string {
	switch {
	case stream != "" && group != "":
		return " " + sanitize(stream+"/"+group) + ":"
	case stream != "":
		return " stream " + sanitize(stream) + ":"
	case address != "":
		return " " + sanitize(address) + ":"
	}
	return ""
}
