package report

import (
	"strings"
	"unicode"

	"github.com/shardgate/shardgate/internal/mdtext"
)

// Plan-derived text (addresses, prefixes, groups, types, diffs, messages quoting
// them, terraform's errors) is written by whoever wrote the pull request. GitHub
// renders comments and check runs as GFM and then links mentions (@user,
// @org/team), issue references (#1, owner/repo#1), bare URLs (http://, www.) and
// e-mail addresses in every text node outside code. So untrusted text is either
// put in a code span or code block that it cannot close (GitHub processes nothing
// inside code), or escaped character by character, with an invisible joiner
// breaking what GitHub would link. Line breaks, control characters and the
// invisible formatting characters (bidi overrides, zero-width spaces) are shown
// as escapes everywhere, so a name can neither start a block nor hide or
// reorder what a reviewer reads.

// Default caps on how much of one untrusted string a rendering shows, in runes.
const (
	nameCap    = 512
	messageCap = mdtext.MessageCap
	lineCap    = 1000
)

// Code renders s as an inline code span that no content can break out of.
func Code(s string) string { return full.code(s) }

// Escape renders s as inert plain markdown text on one line: no emphasis, link,
// image, HTML, mention, reference, autolink, heading or table cell break.
func Escape(s string) string { return full.text(s) }

// CodeBlock renders s, which may span lines, as a fenced code block longer than
// any backtick run in it, ending in a newline. Each line shows at most 1000 runes.
func CodeBlock(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = oneLine(l, lineCap)
	}
	return codeBlockLines(lines)
}

// codeBlockLines fences lines that are already one line each (oneLine).
func codeBlockLines(lines []string) string {
	body := strings.Join(lines, "\n")
	f := strings.Repeat("`", max(3, longestRun(body, '`')+1))
	return f + "\n" + body + "\n" + f + "\n"
}

// Plain makes s safe to print on one line of a terminal or log: line breaks,
// control characters (terminal escapes) and invisible formatting characters are
// shown as escapes.
func Plain(s string) string { return mdtext.Sanitize(s) }

// mdWriter renders untrusted text for markdown, showing at most name runes of a
// name (code) and msg runes of a message (text), so no one string can take the
// whole budget.
type mdWriter struct{ name, msg int }

func (w mdWriter) code(s string) string {
	s = mdtext.Sanitize(mdtext.CapRunes(s, w.name))
	// A literal HTML comment opener is broken up so content can never carry the
	// hidden marker that identifies shardgate's own comment.
	s = strings.ReplaceAll(s, "<!--", "< !--")
	if s == "" {
		return "` `"
	}
	n := longestRun(s, '`')
	f := strings.Repeat("`", n+1)
	// CommonMark strips one space from each end when both ends have one; pad so
	// content that starts or ends with a backtick or a space shows as it is.
	if n > 0 || strings.HasPrefix(s, " ") && strings.HasSuffix(s, " ") {
		return f + " " + s + " " + f
	}
	return f + s + f
}

// cell is a code span safe inside a table row: GFM splits cells at '|' before
// it sees code spans, and takes "\|" back to '|' inside them.
func (w mdWriter) cell(s string) string { return strings.ReplaceAll(w.code(s), "|", `\|`) }

// text escapes s as plain markdown text (see Escape).
func (w mdWriter) text(s string) string { return mdtext.Escape(s, w.msg) }

// bold renders s as strong text. Spaces at its ends would keep "**" from
// opening or closing, so they are trimmed; nothing is left bold when nothing is left.
func (w mdWriter) bold(s string) string {
	s = strings.TrimFunc(s, unicode.IsSpace)
	if s == "" {
		return ""
	}
	return "**" + w.text(s) + "**"
}

// longestRun is the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	best, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			best = max(best, run)
		} else {
			run = 0
		}
	}
	return best
}

// stripMentions drops the '@' that would make GitHub mention a user or team
// ("@alice", "@org/sre"): approvers and actors are named, never pinged.
func stripMentions(s string) string {
	if !strings.Contains(s, "@") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '@' && i+1 < len(s) && isWordByte(s[i+1]) && (i == 0 || !isWordByte(s[i-1])) {
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}
