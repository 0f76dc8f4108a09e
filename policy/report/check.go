package report

import (
	"fmt"
	"strings"
)

// Check runs: GitHub shows a check run's title as plain text and renders its
// summary and text as GFM, so both go through the same escaping as the comment.

// CheckTitle is the check run's title: the one-line verdict, at most 250 bytes.
func (r *Report) CheckTitle() string { return capBytes(r.Summary(), 250) }

// CheckSummary is the check run's output summary: the verdict, then the
// violations, at most maxChars bytes (MaxCheckChars when maxChars <= 0).
func (r *Report) CheckSummary(maxChars int) string {
	r = r.shown()
	if maxChars <= 0 {
		maxChars = MaxCheckChars
	}
	n := -1
	out := r.checkSummary(n)
	if len(out) <= maxChars {
		return out
	}
	if fitList(&n, len(r.Decision.Violations), func() bool { return len(r.checkSummary(n)) <= maxChars }) {
		return r.checkSummary(n)
	}
	return r.compactMarkdown(maxChars)
}

func (r *Report) checkSummary(violations int) string {
	w := full
	var b strings.Builder
	fmt.Fprintf(&b, "%s **%s**\n\n", r.icon(), w.text(r.Summary()))
	if r.incomplete() {
		fmt.Fprintf(&b, "⚠️ **Incomplete plan**: %s\n\n", w.text(incompleteNote))
	}
	if others := r.OtherChanges(); len(others) > 0 {
		fmt.Fprintf(&b, "**Other resources:** %s\n\n", w.text(otherCounts(others)))
	}
	shown := 0
	for _, v := range r.Decision.Violations {
		if !allows(violations, shown) {
			break
		}
		fmt.Fprintf(&b, "- %s%s: %s\n", w.code(v.Rule), where(w, v.StreamPrefix, v.ConsumerGroup, v.Address), w.text(v.Message))
		shown++
	}
	truncated(&b, len(r.Decision.Violations)-shown, "violation")
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// CheckText is the check run's output text: the whole markdown report, at most
// maxChars bytes (MaxCheckChars when maxChars <= 0).
func (r *Report) CheckText(maxChars int) string {
	if maxChars <= 0 {
		maxChars = MaxCheckChars
	}
	return r.Markdown(maxChars)
}

// notPlannedLines is how many of an error's last lines NotPlanned shows.
const notPlannedLines = 40

// NotPlanned renders a project that could not be planned, for the comment
// (project set: under its heading) and for the check run summary (project ""):
// the last 40 lines of detail, terraform's error text, in a code block it cannot
// close, at most maxChars bytes (MaxCommentChars when maxChars <= 0).
func NotPlanned(project, detail string, maxChars int) string {
	if maxChars <= 0 {
		maxChars = MaxCommentChars
	}
	detail = strings.ReplaceAll(strings.ReplaceAll(strings.TrimRight(detail, "\n"), "\r\n", "\n"), "\r", "\n")
	lines := strings.Split(detail, "\n")
	if len(lines) > notPlannedLines {
		lines = lines[len(lines)-notPlannedLines:]
	}
	for i, l := range lines {
		lines[i] = oneLine(l, lineCap)
	}
	head := ""
	for _, n := range []int{nameCap, 64, 16} {
		head = ""
		if project != "" {
			head = fmt.Sprintf("### ❌ Project %s\n\n", mdWriter{name: n, msg: n}.code(project))
		}
		head += "Not planned:\n\n"
		// Drop the oldest lines first: terraform ends with what went wrong.
		for skip := 0; skip < len(lines); skip++ {
			shown := lines[skip:]
			if skip > 0 {
				shown = append([]string{"…"}, shown...)
			}
			if out := head + codeBlockLines(shown); len(out) <= maxChars {
				return out
			}
		}
		if len(head)+len("_(the error is too long to show here; see the logs)_\n") <= maxChars {
			return head + "_(the error is too long to show here; see the logs)_\n"
		}
	}
	return capBytes("Not planned", maxChars)
}

// capBytes cuts s to at most n bytes on a rune boundary.
func capBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xc0 == 0x80 {
		n--
	}
	return s[:max(n, 0)]
}
