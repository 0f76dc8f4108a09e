package runner

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Diagnostic is one of terraform's error or warning messages, read from the
// (already redacted) output of a command: what a person needs to fix it.
type Diagnostic struct {
	Severity string `json:"severity"` // "error" or "warning"
	Summary  string `json:"summary"`
	// Detail is terraform's explanation, wrapped as terraform printed it.
	Detail string `json:"detail,omitempty"`
	// File and Line are where the problem is, relative to the root module
	// (terraform's "on main.tf line 4"); empty and 0 when terraform named none.
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	// Context is the block terraform names after the line, e.g.
	// `resource "terraform_data" "x"`.
	Context string `json:"context,omitempty"`
	// Snippet is the source line (and expression values) terraform quotes.
	Snippet string `json:"snippet,omitempty"`
}

// Bounds of what a failure keeps of terraform's diagnostics: enough to act
// on, not so much that one broken configuration fills a comment.
const (
	maxDiagnostics    = 20
	maxSummaryRunes   = 300
	maxDetailRunes    = 4000
	maxSnippetRunes   = 1000
	maxContextRunes   = 200
	maxPlainLineRunes = 300
)

// Where is "file:line", "file", or "" when terraform named no place.
func (d Diagnostic) Where() string {
	switch {
	case d.File == "":
		return ""
	case d.Line > 0:
		return d.File + ":" + strconv.Itoa(d.Line)
	}
	return d.File
}

// Headline is the diagnostic on one line: place, summary and the first
// sentence of the detail (which names the variable, block or value).
func (d Diagnostic) Headline() string {
	s := d.Summary
	if first := firstSentence(d.Detail); first != "" {
		s += ": " + first
	}
	if w := d.Where(); w != "" {
		s = w + ": " + s
	}
	return s
}

// String renders the diagnostic as terraform does, for a terminal or log.
func (d Diagnostic) String() string {
	var b strings.Builder
	sev := "Error"
	if d.Severity == "warning" {
		sev = "Warning"
	}
	fmt.Fprintf(&b, "%s: %s\n", sev, d.Summary)
	if w := d.Where(); w != "" {
		fmt.Fprintf(&b, "  on %s", w)
		if d.Context != "" {
			fmt.Fprintf(&b, ", in %s", d.Context)
		}
		b.WriteString("\n")
	}
	if d.Snippet != "" {
		b.WriteString(d.Snippet + "\n")
	}
	if d.Detail != "" {
		b.WriteString("\n" + d.Detail + "\n")
	}
	return b.String()
}

var (
	diagHeader = regexp.MustCompile(`^(Error|Warning): (.*)$`)
	diagPlace  = regexp.MustCompile(`^\s*on (.+?) line (\d+)(?:, in (.+))?:$`)
)

// parseDiagnostics reads terraform's human-readable diagnostics ("Error:
// summary", an optional "on FILE line N" with the quoted source, then the
// detail) from output printed with -no-color. A failed command whose output
// holds none (some commands print a bare sentence) gives one error built
// from its output. At most maxDiagnostics are kept, each bounded.
func parseDiagnostics(output string, failed bool) []Diagnostic {
	lines := strings.Split(strings.ReplaceAll(output, "\r\n", "\n"), "\n")
	for i, l := range lines {
		switch {
		case strings.TrimSpace(l) == "╵":
			// The end of a box-drawn diagnostic (terraform draws boxes without
			// -no-color, and always for CLI configuration warnings).
			lines[i] = boxEnd
			continue
		case strings.HasPrefix(l, "│"):
			l = strings.TrimPrefix(strings.TrimPrefix(l, "│"), " ")
		}
		lines[i] = strings.TrimRight(strings.TrimLeft(l, "╷"), " \t")
	}
	var out []Diagnostic
	errs, rest := 0, 0
	for i := 0; i < len(lines); {
		m := diagHeader.FindStringSubmatch(lines[i])
		if m == nil {
			i++
			continue
		}
		d, next := parseDiagnostic(lines, i, m)
		i, rest = next, next
		if d.Severity == "error" {
			errs++
		}
		if len(out) < maxDiagnostics {
			out = append(out, d)
		}
	}
	if errs == 0 && failed {
		// Terraform's own words come last: prose after the diagnostics.
		if d, ok := bareDiagnostic(lines[rest:]); ok {
			out = append(out, d)
		}
	}
	return out
}

const boxEnd = "\x00╵"

// parseDiagnostic reads the diagnostic whose header m is lines[i]; it
// returns it and the index of the first line after it.
func parseDiagnostic(lines []string, i int, m []string) (Diagnostic, int) {
	d := Diagnostic{Severity: strings.ToLower(m[1])}
	summary := []string{m[2]}
	i++
	for ; i < len(lines) && lines[i] != "" && lines[i] != boxEnd && !diagHeader.MatchString(lines[i]); i++ {
		summary = append(summary, strings.TrimSpace(lines[i]))
	}
	d.Summary = capRunes(strings.Join(summary, " "), maxSummaryRunes)
	i = skipBlank(lines, i)
	if i < len(lines) {
		if p := diagPlace.FindStringSubmatch(lines[i]); p != nil {
			d.File, d.Context = p[1], capRunes(p[3], maxContextRunes)
			d.Line, _ = strconv.Atoi(p[2])
			var snippet []string
			for i++; i < len(lines) && lines[i] != "" && lines[i] != boxEnd && !diagHeader.MatchString(lines[i]); i++ {
				snippet = append(snippet, lines[i])
			}
			d.Snippet = capRunes(strings.Join(snippet, "\n"), maxSnippetRunes)
			i = skipBlank(lines, i)
		}
	}
	var detail []string
	for ; i < len(lines) && !diagHeader.MatchString(lines[i]); i++ {
		if lines[i] == boxEnd {
			i++
			break
		}
		detail = append(detail, lines[i])
	}
	d.Detail = capRunes(strings.TrimSpace(strings.Join(detail, "\n")), maxDetailRunes)
	return d, i
}

// bareDiagnostic makes an error of output that is only prose, such as
// `workspace new`'s refusal of a name: its first paragraph is the summary.
func bareDiagnostic(lines []string) (Diagnostic, bool) {
	kept := lines[:0:0]
	for _, l := range lines {
		if l != boxEnd {
			kept = append(kept, l)
		}
	}
	lines = kept
	i := skipBlank(lines, 0)
	var summary []string
	for ; i < len(lines) && lines[i] != ""; i++ {
		summary = append(summary, strings.TrimSpace(lines[i]))
	}
	if len(summary) == 0 {
		return Diagnostic{}, false
	}
	rest := strings.TrimSpace(strings.Join(lines[i:], "\n"))
	return Diagnostic{Severity: "error", Summary: capRunes(strings.Join(summary, " "), maxSummaryRunes),
		Detail: capRunes(rest, maxDetailRunes)}, true
}

func skipBlank(lines []string, i int) int {
	for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
		i++
	}
	return i
}

// firstSentence is the first sentence of text's first paragraph, unwrapped,
// at most maxPlainLineRunes.
func firstSentence(text string) string {
	para, _, _ := strings.Cut(strings.TrimSpace(text), "\n\n")
	para = strings.Join(strings.Fields(para), " ")
	if i := strings.Index(para, ". "); i >= 0 {
		para = para[:i+1]
	}
	return capRunes(para, maxPlainLineRunes)
}

// headline picks the diagnostic a one-line error names: the first error
// with a place (init's first error is a generic "Terraform encountered
// problems during initialisation"), else the first error.
func headline(diags []Diagnostic) (Diagnostic, int, bool) {
	errs := 0
	var first, placed *Diagnostic
	for i := range diags {
		if diags[i].Severity != "error" {
			continue
		}
		errs++
		if first == nil {
			first = &diags[i]
		}
		if placed == nil && diags[i].File != "" {
			placed = &diags[i]
		}
	}
	switch {
	case placed != nil:
		// init's generic "encountered problems" error is not counted.
		placedErrs := 0
		for _, d := range diags {
			if d.Severity == "error" && d.File != "" {
				placedErrs++
			}
		}
		return *placed, placedErrs, true
	case first != nil:
		return *first, errs, true
	}
	return Diagnostic{}, 0, false
}

// capRunes cuts s to at most n runes, marking the cut with an ellipsis.
func capRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	count := 0
	for i := range s {
		if count == n {
			return s[:i] + "…"
		}
		count++
	}
	return s
}
