// Package reporttest checks, for the tests of every package that renders
// markdown for GitHub (report, drift), that plan-derived text stays text: it
// parses a rendering as GitHub-flavoured markdown and fails on any node a
// hostile name could have made.
package reporttest

import (
	"bytes"
	"fmt"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// Sentinel ends a rendering under test: if the rendering left a block open
// (a code fence, a <details>), the sentinel is swallowed by it.
const Sentinel = "\n\n#### Sentinel\n"

// GFM is GitHub-flavoured markdown as goldmark parses it.
var GFM = goldmark.New(goldmark.WithExtensions(extension.GFM))

// Inert is what a renderer may make itself: the lines of HTML blocks and the
// headings it writes (a heading "Sentinel" must be allowed too).
type Inert struct {
	OwnHTML, OwnHeading *regexp.Regexp
}

// Require parses md (which ends with Sentinel) and fails on any link, image,
// raw HTML, quote, rule, strikethrough or task box, on HTML blocks and
// headings the renderer does not write, on a <details> left open, and on
// text GitHub would link (mentions, URLs, references) outside code.
func (in Inert) Require(t testing.TB, md, name string) {
	t.Helper()
	src := []byte(md)
	doc := GFM.Parser().Parse(text.NewReader(src))
	opened := 0
	err := ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n.Kind() {
		case ast.KindLink, ast.KindImage, ast.KindAutoLink, ast.KindRawHTML, ast.KindLinkReferenceDefinition,
			ast.KindBlockquote, ast.KindThematicBreak, east.KindStrikethrough, east.KindTaskCheckBox:
			return ast.WalkStop, fmt.Errorf("%s node %q", n.Kind(), NodeText(n, src))
		case ast.KindHTMLBlock:
			for _, line := range strings.Split(strings.TrimRight(string(n.(*ast.HTMLBlock).Text(src)), "\n"), "\n") {
				if !in.OwnHTML.MatchString(line) {
					return ast.WalkStop, fmt.Errorf("HTML block line %q", line)
				}
				opened += strings.Count(line, "<details>") - strings.Count(line, "</details>")
			}
		case ast.KindHeading:
			if h := HeadingText(n, src); !in.OwnHeading.MatchString(h) {
				return ast.WalkStop, fmt.Errorf("heading %q", h)
			}
		}
		return ast.WalkContinue, nil
	})
	require.NoError(t, err, "%s:\n%s", name, md)
	require.Zero(t, opened, "%s: every <details> is closed", name)
	last := doc.LastChild()
	require.Equal(t, ast.KindHeading, last.Kind(), "%s: nothing is left open", name)
	require.Equal(t, "Sentinel", HeadingText(last, src), name)

	// GitHub links mentions, references, URLs and e-mail addresses in the text
	// it renders outside code and pre: none may be left there.
	var out bytes.Buffer
	require.NoError(t, GFM.Renderer().Render(&out, src, doc))
	visible := VisibleText(out.String())
	for _, re := range linkable {
		require.False(t, re.MatchString(visible), "%s: %s in text outside code: %q", name, re, re.FindString(visible))
	}
}

var (
	linkable = []*regexp.Regexp{
		regexp.MustCompile(`(?i)@[a-z0-9]`),   // mentions and e-mail addresses
		regexp.MustCompile(`(?i)[a-z0-9]://`), // URLs
		regexp.MustCompile(`(?i)www\.`),       // www. autolinks
		regexp.MustCompile(`#[0-9]`),          // issue references
	}
	inCode = regexp.MustCompile(`(?s)<pre>.*?</pre>|<code>.*?</code>`)
	tag    = regexp.MustCompile(`(?s)<!--.*?-->|<[^>]*>`)
)

// VisibleText is the text of rendered HTML that GitHub's filters would see:
// outside code and pre, tags dropped, entities decoded.
func VisibleText(h string) string {
	return html.UnescapeString(tag.ReplaceAllString(inCode.ReplaceAllString(h, ""), " "))
}

// HeadingText is a heading's text outside code spans.
func HeadingText(n ast.Node, src []byte) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if t, ok := c.(*ast.Text); ok {
			b.Write(t.Value(src))
		}
	}
	return b.String()
}

// NodeText is the text of a node: a block's lines, an inline's text.
func NodeText(n ast.Node, src []byte) string {
	if n.Type() == ast.TypeBlock {
		return string(n.Lines().Value(src))
	}
	var b strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if t, ok := c.(*ast.Text); ok && entering {
			b.Write(t.Value(src))
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}
