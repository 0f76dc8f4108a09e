package report

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
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
	messageCap = 4096
	lineCap    = 1000
)

// zwj is the zero-width joiner inserted after '@', '#' and inside "://" and
// "www." so GitHub finds no mention, reference or link there.
const zwj = "\u200d"

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
func Plain(s string) string { return sanitize(s) }

// mdWriter renders untrusted text for markdown, showing at most name runes of a
// name (code) and msg runes of a message (text), so no one string can take the
// whole budget.
type mdWriter struct{ name, msg int }

func (w mdWriter) code(s string) string {
	s = sanitize(capRunes(s, w.name))
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
func (w mdWriter) text(s string) string {
	s = sanitize(capRunes(s, w.msg))
	var b strings.Builder
	b.Grow(len(s) + len(s)/4)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '<':
			// An entity rather than "\<", so not even the raw text holds "<!--"
			// (shardgate's comment marker).
			b.WriteString("&lt;")
		case c == '_' && intraword(s, i):
			// Between letters or digits '_' can neither open nor close emphasis
			// (CommonMark's flanking rules): "shard_count" stays as it is.
			b.WriteByte(c)
		case strings.IndexByte(markdownPunct, c) >= 0, i == 0 && strings.IndexByte(blockPunct, c) >= 0:
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '@':
			b.WriteString("@" + zwj)
		case c == ':' && strings.HasPrefix(s[i:], "://"):
			b.WriteString(":" + zwj)
		case (c == 'w' || c == 'W') && len(s) >= i+4 && strings.EqualFold(s[i:i+4], "www."):
			b.WriteString(s[i:i+3] + zwj)
			i += 2
		default:
			b.WriteByte(c)
		}
		if c == '#' {
			b.WriteString(zwj)
		}
	}
	return b.String()
}

// intraword reports whether the byte at i sits between two letters or digits.
func intraword(s string, i int) bool {
	before, _ := utf8.DecodeLastRuneInString(s[:i])
	after, _ := utf8.DecodeRuneInString(s[i+1:])
	return isAlnum(before) && isAlnum(after)
}

func isAlnum(r rune) bool { return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r)) }

// bold renders s as strong text. Spaces at its ends would keep "**" from
// opening or closing, so they are trimmed; nothing is left bold when nothing is left.
func (w mdWriter) bold(s string) string {
	s = strings.TrimFunc(s, unicode.IsSpace)
	if s == "" {
		return ""
	}
	return "**" + w.text(s) + "**"
}

// markdownPunct are the ASCII characters that can start or end markdown inline
// syntax (emphasis, strikethrough, code, links, images, reference links,
// footnotes, HTML, autolinks, entities, tables, math); each is backslash-escaped.
// Without '[' and '<' no '!' or ')' means anything.
const markdownPunct = "\\`*_[]<&|~$"

// blockPunct can start a block (heading, quote, list, setext underline) at the
// start of a line. Escaped text is never put at the start of a line; if it were,
// its first character is escaped too.
const blockPunct = "#>-+=!"

// sanitize shows line breaks, control characters, invisible formatting
// characters and invalid UTF-8 as visible escapes, leaving everything else.
func sanitize(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || hidden(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80 && hidden(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case hidden(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// hidden reports control characters and the characters that are invisible or
// change how the text around them is ordered or broken into lines.
func hidden(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r < 0xa0:
		return true
	case r == 0xad, r == 0x061c, r == 0x180e, r >= 0x200b && r <= 0x200f, r >= 0x2028 && r <= 0x202e,
		r >= 0x2060 && r <= 0x2069, r == 0xfeff, r >= 0xfff9 && r <= 0xfffb:
		return true
	}
	return false
}

// capRunes cuts s to at most n runes, marking the cut with an ellipsis.
func capRunes(s string, n int) string {
	if n <= 0 || len(s) <= n {
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
