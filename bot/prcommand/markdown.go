package prcommand

import (
	"regexp"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// commentMarkdown parses comment bodies as GitHub does: CommonMark with the
// GFM extensions (tables, strikethrough, autolinks, task lists). Parsing keeps
// no state between calls, so one parser serves every worker.
var commentMarkdown = goldmark.New(goldmark.WithExtensions(extension.GFM)).Parser()

// formatted stands in for an inline node that is not plain text (code, a
// link, HTML, emphasis…) in a line returned by commandLines. It is not a
// character a command word may hold (validStreamPrefix refuses it), so a
// command line holding one cannot pass for a command.
const formatted = "\uFFFD"

// commandLines returns the lines of the paragraphs that are direct children
// of the document, with every inline node other than plain text replaced by
// formatted. Paragraphs inside an HTML element a top-level HTML block left
// open (<details>, <div>…) are skipped: GitHub hides or restyles them.
func commandLines(src []byte) []string {
	doc := commentMarkdown.Parse(text.NewReader(src))
	var lines []string
	depth := 0
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		switch b := n.(type) {
		case *ast.HTMLBlock:
			depth = max(depth+htmlDepthChange(string(b.Text(src))), 0)
		case *ast.Paragraph:
			if depth == 0 {
				lines = append(lines, paragraphLines(b, src)...)
			}
		}
	}
	return lines
}

// paragraphLines is the text of a paragraph, line by line.
func paragraphLines(p *ast.Paragraph, src []byte) []string {
	var lines []string
	var cur strings.Builder
	for n := p.FirstChild(); n != nil; n = n.NextSibling() {
		t, ok := n.(*ast.Text)
		if !ok {
			cur.WriteString(" " + formatted + " ")
			continue
		}
		cur.Write(t.Value(src))
		if t.SoftLineBreak() || t.HardLineBreak() {
			lines = append(lines, cur.String())
			cur.Reset()
		}
	}
	return append(lines, cur.String())
}

var (
	htmlComment = regexp.MustCompile(`(?s)<!--.*?(-->|$)`)
	htmlTag     = regexp.MustCompile(`<(/?)([A-Za-z][A-Za-z0-9-]*)(?:[^>]*?)(/?)>`)
	voidTags    = map[string]bool{"area": true, "base": true, "br": true, "col": true, "embed": true, "hr": true,
		"img": true, "input": true, "link": true, "meta": true, "source": true, "track": true, "wbr": true}
)

// htmlDepthChange counts the elements an HTML block opens minus those it
// closes, comments aside.
func htmlDepthChange(block string) int {
	d := 0
	for _, m := range htmlTag.FindAllStringSubmatch(htmlComment.ReplaceAllString(block, ""), -1) {
		switch {
		case voidTags[strings.ToLower(m[2])] || m[3] == "/":
		case m[1] == "/":
			d--
		default:
			d++
		}
	}
	return d
}
