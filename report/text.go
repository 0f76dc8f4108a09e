package report

import (
	"fmt"
	"strings"
)

// Text renders the report for a terminal: the verdict, the changes, and every
// finding with how to resolve it.
func (r *Report) Text() string {
	var b strings.Builder
	d := r.Decision
	if r.Project != "" {
		fmt.Fprintf(&b, "Project %s\n", r.Project)
	}
	fmt.Fprintf(&b, "%s\n", r.Summary())
	c := r.Coordinator
	if c.Consulted && !c.Reachable {
		fmt.Fprintf(&b, "\nThe coordinator could not be reached: %s. The policy fails closed.\n", c.Error)
	}
	if changes := r.Changes(); len(changes) > 0 {
		b.WriteString("\nCoordinator changes:\n")
		for _, ch := range changes {
			fmt.Fprintf(&b, "  %-9s %s/%s  shards %s", ch.Action, ch.StreamPrefix, ch.ConsumerGroup, shardsCell(ch))
			if n := note(ch); n != "" {
				fmt.Fprintf(&b, "  (%s)", n)
			}
			fmt.Fprintf(&b, "\n            %s\n", ch.Address)
		}
	}
	if len(d.Violations) > 0 {
		b.WriteString("\nViolations:\n")
		for _, v := range d.Violations {
			fmt.Fprintf(&b, "  [%s]%s %s\n    %s\n", v.Rule, plainWhere(v.StreamPrefix, v.ConsumerGroup), v.Message, r.Resolution(v))
		}
	}
	if len(d.Warnings) > 0 {
		b.WriteString("\nWarnings:\n")
		for _, w := range d.Warnings {
			fmt.Fprintf(&b, "  [%s]%s %s\n", w.Rule, plainWhere(w.StreamPrefix, w.ConsumerGroup), w.Message)
		}
	}
	if len(d.ExceptionsApplied) > 0 {
		b.WriteString("\nExceptions applied:\n")
		for _, e := range d.ExceptionsApplied {
			fmt.Fprintf(&b, "  %s waives [%s]%s %s\n", e.Label, e.Rule, plainWhere(e.StreamPrefix, e.ConsumerGroup), e.Message)
		}
	}
	if len(d.AttestationsUsed) > 0 {
		b.WriteString("\nProducer-quiesce attestations used:\n")
		for _, a := range d.AttestationsUsed {
			fmt.Fprintf(&b, "  %s by %s, valid until %s\n", a.StreamPrefix, a.Actor, a.ExpiresAt.UTC().Format("2006-01-02 15:04 MST"))
		}
	}
	if len(d.LabelsNotCounted) > 0 {
		b.WriteString("\nLabels not counted:\n")
		for _, l := range d.LabelsNotCounted {
			fmt.Fprintf(&b, "  %s: %s\n", l.Name, l.Reason)
		}
	}
	if len(r.LockWaits) > 0 {
		b.WriteString("\nTerraform state locks waited on:\n")
		for _, w := range r.LockWaits {
			fmt.Fprintf(&b, "  %s held by %s for %s since %s: waited %.0fs\n", w.ID, w.Who, w.Operation,
				w.Created.UTC().Format("2006-01-02 15:04:05 MST"), w.WaitedSeconds)
		}
	}
	return b.String()
}

func plainWhere(stream, group string) string {
	switch {
	case stream != "" && group != "":
		return " " + stream + "/" + group + ":"
	case stream != "":
		return " stream " + stream + ":"
	}
	return ""
}
