package report

import (
	"fmt"
	"strconv"
	"strings"
)

// Diagnostic is one of terraform's errors or warnings, as the runner read it
// from terraform's (redacted) output. Every field is terraform's text about
// a configuration the pull request wrote: untrusted.
type Diagnostic struct {
	Severity string `json:"severity"` // "error" or "warning"
	Summary  string `json:"summary"`
	Detail   string `json:"detail,omitempty"`
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
	Context  string `json:"context,omitempty"`
	Snippet  string `json:"snippet,omitempty"`
}

// diagnosticLines is how many lines of one diagnostic's snippet and detail
// are shown at most.
const diagnosticLines = 60

// NotPlannedWithDiagnostics is NotPlanned followed by terraform's
// diagnostics (see Diagnostics), folded away in a <details> when collapsed,
// all within maxChars bytes (MaxCommentChars when maxChars <= 0).
func NotPlannedWithDiagnostics(project, detail string, diags []Diagnostic, collapsed bool, maxChars int) string {
	if maxChars <= 0 {
		maxChars = MaxCommentChars
	}
	head := NotPlanned(project, detail, maxChars)
	if len(diags) == 0 {
		return head
	}
	// The one-line error keeps at most half the room; the diagnostics say more.
	if len(head) > maxChars/2 {
		head = NotPlanned(project, detail, maxChars/2)
	}
	return head + "\n" + Diagnostics(diags, collapsed, maxChars-len(head)-1)
}

// Diagnostics renders terraform's diagnostics for markdown: per diagnostic its
// severity, place and summary on one escaped line, then the quoted source and
// the detail in a code block they cannot close. Collapsed puts them in a
// <details> (the pull-request comment); the check run shows them open. It
// shows what fits in maxChars bytes, first diagnostics first, and says how
// many it left out; "" when not even that fits.
func Diagnostics(diags []Diagnostic, collapsed bool, maxChars int) string {
	if len(diags) == 0 || maxChars <= 0 {
		return ""
	}
	open, end := "", ""
	if collapsed {
		open = fmt.Sprintf("<details><summary>Terraform's diagnostics (%d)</summary>\n\n", len(diags))
		end = "</details>\n"
	}
	w := full
	var b strings.Builder
	b.WriteString(open)
	for i, d := range diags {
		left := maxChars - b.Len() - len(end) - len(omittedNote(len(diags)-i))
		if i == len(diags)-1 {
			left += len(omittedNote(len(diags) - i))
		}
		md := diagnosticMarkdown(w, d, diagnosticLines)
		if len(md) > left {
			md = diagnosticMarkdown(w, d, 5)
		}
		if len(md) > left {
			md = diagnosticMarkdown(w, d, 0)
		}
		if len(md) > left {
			b.WriteString(omittedNote(len(diags) - i))
			break
		}
		b.WriteString(md)
	}
	b.WriteString(end)
	if b.Len() > maxChars {
		return ""
	}
	return b.String()
}

func omittedNote(n int) string {
	return fmt.Sprintf("_…%d more %s not shown; see the logs._\n\n", n, pluralNoun(n, "diagnostic"))
}

func pluralNoun(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}

// diagnosticMarkdown renders one diagnostic with at most lines lines of
// source and detail (none: the headline alone).
func diagnosticMarkdown(w mdWriter, d Diagnostic, lines int) string {
	var b strings.Builder
	icon, sev := "❌", "Error"
	if d.Severity == "warning" {
		icon, sev = "⚠️", "Warning"
	}
	fmt.Fprintf(&b, "%s **%s**", icon, sev)
	if d.File != "" {
		where := d.File
		if d.Line > 0 {
			where += ":" + strconv.Itoa(d.Line)
		}
		fmt.Fprintf(&b, " at %s", w.code(where))
		if d.Context != "" {
			fmt.Fprintf(&b, " in %s", w.code(d.Context))
		}
	}
	fmt.Fprintf(&b, ": %s\n\n", w.text(d.Summary))
	if lines <= 0 {
		return b.String()
	}
	var body []string
	if d.Snippet != "" {
		body = append(body, splitLines(d.Snippet)...)
		if d.Detail != "" {
			body = append(body, "")
		}
	}
	if d.Detail != "" {
		body = append(body, splitLines(d.Detail)...)
	}
	if len(body) == 0 {
		return b.String()
	}
	if len(body) > lines {
		body = append(body[:lines], "…")
	}
	for i, l := range body {
		body[i] = oneLine(l, lineCap)
	}
	b.WriteString(codeBlockLines(body))
	b.WriteString("\n")
	return b.String()
}

func splitLines(s string) []string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
	return strings.Split(strings.TrimRight(s, "\n"), "\n")
}
