// Package mdtext holds the character-level rules by which shardgate makes
// untrusted text inert: in markdown (Escape) and on a terminal or log line
// (Sanitize). The report renders with them and the redactor finds secrets in
// the forms they give, so both sit above this leaf.
package mdtext

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MessageCap is how many runes of one untrusted message a rendering shows by
// default.
const MessageCap = 4096

// ZWJ is the zero-width joiner inserted after '@', '#' and inside "://" and
// "www." so GitHub finds no mention, reference or link there.
const ZWJ = "\u200d"

// Escape renders s as inert plain markdown text on one line, showing at most
// limit runes of it: no emphasis, link, image, HTML, mention, reference,
// autolink, heading or table cell break.
func Escape(s string, limit int) string {
	s = Sanitize(CapRunes(s, limit))
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
			b.WriteString("@" + ZWJ)
		case c == ':' && strings.HasPrefix(s[i:], "://"):
			b.WriteString(":" + ZWJ)
		case (c == 'w' || c == 'W') && len(s) >= i+4 && strings.EqualFold(s[i:i+4], "www."):
			b.WriteString(s[i:i+3] + ZWJ)
			i += 2
		default:
			b.WriteByte(c)
		}
		if c == '#' {
			b.WriteString(ZWJ)
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

// markdownPunct are the ASCII characters that can start or end markdown inline
// syntax (emphasis, strikethrough, code, links, images, reference links,
// footnotes, HTML, autolinks, entities, tables, math); each is backslash-escaped.
// Without '[' and '<' no '!' or ')' means anything.
const markdownPunct = "\\`*_[]<&|~$"

// blockPunct can start a block (heading, quote, list, setext underline) at the
// start of a line. Escaped text is never put at the start of a line; if it were,
// its first character is escaped too.
const blockPunct = "#>-+=!"

// Sanitize shows line breaks, control characters, invisible formatting
// characters and invalid UTF-8 as visible escapes, leaving everything else.
func Sanitize(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || Hidden(r) {
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
		case r < 0x80 && Hidden(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case Hidden(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// Hidden reports control characters and the characters that are invisible or
// change how the text around them is ordered or broken into lines.
func Hidden(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r < 0xa0:
		return true
	case r == 0xad, r == 0x061c, r == 0x180e, r >= 0x200b && r <= 0x200f, r >= 0x2028 && r <= 0x202e,
		r >= 0x2060 && r <= 0x2069, r == 0xfeff, r >= 0xfff9 && r <= 0xfffb:
		return true
	}
	return false
}

// CapRunes cuts s to at most n runes, marking the cut with an ellipsis.
func CapRunes(s string, n int) string {
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
