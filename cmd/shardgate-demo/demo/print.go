package demo

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/shardgate/shardgate/coord"
	"github.com/shardgate/shardgate/coord/coordsim"
)

const rule = "════════════════════════════════════════════════════════════════════════"

// printer writes the story for a human. Everything it prints goes through
// redact, so a credential the demo made up never shows.
type printer struct {
	out    io.Writer
	quiet  bool
	redact func(string) string
}

func (p printer) printf(format string, args ...any) {
	fmt.Fprint(p.out, p.redact(fmt.Sprintf(format, args...)))
}

func (p printer) banner(title string) {
	p.printf("%s\n  %s\n%s\n", rule, title, rule)
}

// setting is one line of the setup: what runs where.
func (p printer) setting(name, value string) { p.printf("  %-22s %s\n", name, value) }

func (p printer) step(n, total int, title string) {
	p.printf("\n%s\n  Step %d/%d · %s\n%s\n", rule, n, total, title, rule)
}

func (p printer) note(format string, args ...any) { p.printf("  "+format+"\n", args...) }

// comment prints a version of shardgate's PR comment; quiet prints its
// headlines only.
func (p printer) comment(label, body string) {
	if p.quiet {
		body = headlines(body)
	}
	p.block(label, body)
}

// block prints text framed as a quote.
func (p printer) block(label, body string) {
	p.note("%s:", label)
	for _, line := range strings.Split(strings.TrimRight(body, "\n"), "\n") {
		p.printf("  │ %s\n", line)
	}
}

// headlines are the lines of a comment that say where things stand: the
// status, the rows of the Apply table and the verdicts.
func headlines(body string) string {
	var out []string
	inApply := false
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "#") {
			inApply = strings.Contains(line, "Apply")
		}
		switch {
		case strings.Contains(line, "**Status:**"),
			strings.Contains(line, "**Allowed"), strings.Contains(line, "**Denied"),
			inApply && strings.HasPrefix(line, "| `"):
			out = append(out, strings.TrimSpace(line))
		}
	}
	return strings.Join(out, "\n")
}

func (p printer) groups(groups []coord.Group) {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  STREAM\tGROUP\tSHARDS\tSTATE\tACTIVE MIGRATION")
	for _, g := range groups {
		active := "none"
		if m := g.ActiveMigration; m != nil {
			active = fmt.Sprintf("%s %d → %d (%s)", m.State, m.FromShardCount, m.ToShardCount, m.ReshardingID)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\t%s\n", g.StreamPrefix, g.ConsumerGroup, g.ShardCount, g.State, active)
	}
	tw.Flush()
	p.printf("%s", b.String())
}

func (p printer) audit(events []coordsim.AuditEvent) {
	if len(events) == 0 {
		p.note("(no mutation since the merge)")
		return
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  TIME\tACTION\tSTREAM/GROUP\tOUTCOME\tSTATUS\tPRINCIPAL\tREQUESTED BY\tREQUEST ID\tRESHARDING")
	for _, e := range events {
		target := e.StreamPrefix
		if e.ConsumerGroup != "" {
			target += "/" + e.ConsumerGroup
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", e.Timestamp.Format(time.TimeOnly), e.Action, target,
			e.Outcome, e.Status, e.Principal, dash(e.RequestedBy), dash(e.RequestID), dash(e.ReshardingID))
	}
	tw.Flush()
	p.printf("%s", b.String())
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}
