package drift

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

	"github.com/shardgate/shardgate/planparse"
)

// hostile are names a repository's code or configuration can give a project,
// a stream, a group, a resource, or put into terraform's error text (a subset
// of report's corpus, with marker forgeries added).
var hostile = []string{
	"`", "```", "a`b``c```d", " `` ", "@octocat", "@org/team", "mail a@evil.example", "&#64;octocat",
	"<details>", "</details>", "<img src=x onerror=alert(1)>", "<!-- shardgate -->", "<!--", "-->", "streams -->\n<!-- shardgate:drift project=other -->",
	"<!-- shardgate:drift project=streams -->", "x --> <b>", "<script>alert(1)</script>", "![x](http://e/x.png)", "[x](http://evil)",
	"[x][ref]\n\n[ref]: http://evil", "<http://evil>", "http://evil.example", "www.evil.example", "# heading", "x\n# heading\n",
	"a\n===", "|table|", "| a | b |\n|---|---|", "*emph* ~~s~~", "\u202eevil\u202c", "zero\u200bwidth", "\x1b[31mred", "#123",
	"owner/repo#1", "> quote", "- item", "    indented", "\\", "a\\|b", "```\ncode\n```", "</summary></details><details><summary>",
	strings.Repeat("`@x www.e <details>", 3000),
}

func hostileResult(h string) (*Record, Result) {
	c := planparse.Change{Address: h, Kind: planparse.KindModule, StreamPrefix: h, ConsumerGroup: h, CoordinatorURL: coordURL,
		Coordinator: coordURL, Stream: planparse.StreamKey(coordURL, h), Action: planparse.ActionNoop, ShardsBefore: ip(4), ShardsAfter: ip(4),
		TerraformActions: []string{"no-op"}}
	scale := c
	scale.Address, scale.ConsumerGroup, scale.Action, scale.ShardsAfter, scale.TerraformActions = h+"2", h+"2", planparse.ActionScale, ip(6), []string{h, "create"}
	cs := &planparse.ChangeSet{Changes: []planparse.Change{c, scale}, OtherChanges: []planparse.OtherChange{{Address: h, Type: h, Actions: []string{h}}}}
	res := Check(cs, reached, liveOf(h, map[string]int{h: 8, h + "2": 4}))
	res.Repo, res.Project, res.Branch, res.Commit, res.CheckedAt = "acme/infra", h, h, h, t0
	return record(res, nil, 0), res
}

var gfm = goldmark.New(goldmark.WithExtensions(extension.GFM))

func TestHostileNamesCannotSteerTheIssue(t *testing.T) {
	for i, h := range hostile {
		t.Run(fmt.Sprintf("%02d %.30q", i, h), func(t *testing.T) {
			rec, res := hostileResult(h)
			require.Equal(t, StatusDrifted, res.Status)
			failed := Failed("acme/infra", h, h, h, t0, h, h+"\n"+h)
			for name, md := range map[string]string{
				"drift": Body(rec, res), "failed": Body(rec, failed), "gone": GoneComment(res), "failed comment": FailedComment(failed),
			} {
				require.Less(t, len(md), 65536, name)
				requireInert(t, md+"\n\n#### Sentinel\n", name)
				if strings.HasPrefix(name, "drift") || name == "failed" {
					first, _, _ := strings.Cut(md, "\n")
					require.Equal(t, Marker(h), first)
					if name == "drift" {
						require.Equal(t, 1, strings.Count(md, "<!--"), "%s: only the marker opens an HTML comment", name)
					}
				}
			}
			require.NotContains(t, Title(h), "\n")
		})
	}
	require.NotEqual(t, Marker("a -->"), Marker("a --%3E"))
	require.False(t, strings.HasPrefix(Marker("streams -->\n<!-- x"), Marker("streams")))
}

func requireInert(t *testing.T, md, name string) {
	t.Helper()
	src := []byte(md)
	doc := gfm.Parser().Parse(text.NewReader(src))
	opened := 0
	err := ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n.Kind() {
		case ast.KindLink, ast.KindImage, ast.KindAutoLink, ast.KindRawHTML, ast.KindLinkReferenceDefinition,
			ast.KindBlockquote, ast.KindThematicBreak, east.KindStrikethrough, east.KindTaskCheckBox:
			return ast.WalkStop, fmt.Errorf("%s node %q", n.Kind(), n.Text(src))
		case ast.KindHTMLBlock:
			for _, line := range strings.Split(strings.TrimRight(string(n.(*ast.HTMLBlock).Text(src)), "\n"), "\n") {
				if !ownHTML.MatchString(line) {
					return ast.WalkStop, fmt.Errorf("HTML block line %q", line)
				}
				opened += strings.Count(line, "<details>") - strings.Count(line, "</details>")
			}
		case ast.KindHeading:
			if h := headingText(n, src); !ownHeading.MatchString(h) {
				return ast.WalkStop, fmt.Errorf("heading %q", h)
			}
		}
		return ast.WalkContinue, nil
	})
	require.NoError(t, err, "%s:\n%s", name, md)
	require.Zero(t, opened, "%s: every <details> is closed", name)
	last := doc.LastChild()
	require.Equal(t, ast.KindHeading, last.Kind(), "%s: nothing is left open", name)
	var out bytes.Buffer
	require.NoError(t, gfm.Renderer().Render(&out, src, doc))
	visible := html.UnescapeString(tag.ReplaceAllString(inCode.ReplaceAllString(out.String(), ""), " "))
	for _, re := range linkable {
		require.False(t, re.MatchString(visible), "%s: %s in text outside code: %q", name, re, re.FindString(visible))
	}
}

var (
	ownHTML    = regexp.MustCompile(`^(<!-- shardgate:drift project(-sha256)?=[^ ]* -->|<details><summary>terraform's diagnostics</summary>|</details>)$`)
	ownHeading = regexp.MustCompile(`^(Drift in project |Sentinel)$`)
	linkable   = []*regexp.Regexp{
		regexp.MustCompile(`(?i)@[a-z0-9]`), regexp.MustCompile(`(?i)[a-z0-9]://`), regexp.MustCompile(`(?i)www\.`), regexp.MustCompile(`#[0-9]`),
	}
	inCode = regexp.MustCompile(`(?s)<pre>.*?</pre>|<code>.*?</code>`)
	tag    = regexp.MustCompile(`(?s)<!--.*?-->|<[^>]*>`)
)

func headingText(n ast.Node, src []byte) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if t, ok := c.(*ast.Text); ok {
			b.Write(t.Value(src))
		}
	}
	return b.String()
}
