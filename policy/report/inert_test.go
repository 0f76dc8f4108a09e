package report

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"

	"github.com/shardgate/shardgate/internal/mdtext"
	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/policy/report/reporttest"
)

// hostile are names a pull request can give a stream, a group, a resource, a
// project, or put into terraform's error text.
var hostile = []string{
	"`", "``", "```", "````", "`````````", "a`b``c```d", "`leading", "trailing`", " `` ", " spaced ",
	"@octocat", "@org/team", "x @octocat y", "cc:@octocat", "mail a@evil.example", "&#64;octocat", "&commat;octocat",
	"<details>", "</details>", "<details open><summary>x", "<img src=x onerror=alert(1)>", "<!-- shardgate -->", "<!--", "-->",
	"<script>alert(1)</script>", "<a href='http://evil'>x</a>",
	"![x](http://e/x.png)", "[x](http://evil)", "[x][ref]\n\n[ref]: http://evil", "[ref]", "<http://evil>", "<a@evil.example>",
	"http://evil.example", "https://evil.example/p?q=1", "www.evil.example", "WWW.EVIL.EXAMPLE", "ftp://evil.example", "mailto:a@evil.example",
	"# heading", "x\n# heading\n", "x\r\n## h", "x\r# h", "x\u2028# h", "x\u2029y", "a\n===", "a\n---\n", "\n\n<details>\n\n",
	"|table|", "| a | b |\n|---|---|\n| c | d |", "*emph* _u_ ~~s~~ **b** __b__", "$x^2$", "$`x`$", "&lt;b&gt;", "&amp;",
	"\u202eevil\u202c", "\u2066x\u2069", "zero\u200bwidth\u200d", "\ufeffbom", "\x1b[31mred\x1b[0m", "\x00nul", "\xff\xfe invalid", "\x85next",
	"#123", "owner/repo#1", "GH-1", "> quote", "- item", "1. item", "    indented", "\\", "\\`", "x\\", "[^1]", "x\ty", ":+1:",
	"a\\|b", "\\|", "|\\", "__init__", "a_b_", "x_\u00e9_y", "_", "```\ncode\n```", "~~~\nx", "</summary></details><details><summary>", "\n```\n</details>\n\n# pwned\n\n<details>\n```",
	strings.Repeat("`@x www.e <details>", 5000), strings.Repeat("n", 70000),
}

// hostileReport puts h into every plan-derived field a report renders.
func hostileReport(h string) *Report {
	c := func(ch planparse.Change) planparse.Change {
		ch.Address, ch.StreamPrefix, ch.ConsumerGroup, ch.Stream = h, h, h, h
		ch.TerraformActions = []string{h}
		return ch
	}
	changes := []planparse.Change{
		c(planparse.Change{Action: planparse.ActionMove, Coordinator: h, MovedFrom: h, ShardsBefore: ip(3), ShardsAfter: ip(3)}),
		c(planparse.Change{Action: planparse.ActionScale, Coordinator: "http://other", Tainted: true, PriorShards: ip(4), ShardsAfter: ip(5)}),
		c(planparse.Change{Action: planparse.ActionCreate, InvalidShardCount: h, Unknown: []string{h}, Missing: []string{h}}),
		c(planparse.Change{Action: planparse.ActionNoop, ShardsBefore: ip(2), ShardsAfter: ip(3)}),
		c(planparse.Change{Action: planparse.ActionDelete, ShardsBefore: ip(2), MovedFrom: h}),
	}
	return &Report{
		Project: h,
		ChangeSet: &planparse.ChangeSet{
			Incomplete: true,
			Changes:    changes,
			Resources: []planparse.ResourceChange{{Address: h, Actions: []string{h, "create"}, ActionReason: h, Diff: []string{h, h + ": 1 -> " + h}},
				{Address: h, Actions: []string{"delete"}}},
			OtherChanges: []planparse.OtherChange{{Address: h, Type: h, Actions: []string{"delete"}, ActionReason: h},
				{Address: h, Type: h, Actions: []string{h}}},
		},
		Decision: policy.Decision{
			Changes: changes,
			Violations: []policy.Violation{
				{Rule: h, Title: h, StreamPrefix: h, ConsumerGroup: h, Message: "scaling " + h + " needs " + h, Waivable: true, ExceptionLabel: h},
				{Rule: policy.RuleQuiesceAttestation, StreamPrefix: h, Message: h, Waivable: true, ExceptionLabel: "policy-exception/" + h},
				{Rule: policy.RuleInvalidShardCount, StreamPrefix: h, ConsumerGroup: h, Message: "shard_count " + h + " is not a whole number"},
				{Rule: policy.RuleUnknownValue, Address: h, Message: h + " lacks " + h},
			},
			Warnings:          []policy.Warning{{Rule: h, StreamPrefix: h, Message: h}, {Rule: "other_resource_destroyed", Address: h, Message: h + " is destroyed"}},
			ExceptionsApplied: []policy.ExceptionApplied{{Rule: h, Label: h, Actor: h, StreamPrefix: h, ConsumerGroup: h, Message: h}},
			AttestationsUsed:  []policy.Attestation{{StreamPrefix: h, Actor: h}},
			LabelsNotCounted:  []policy.Label{{Name: h, Actor: h, Reason: h}},
		},
		Rules:       []policy.RuleInfo{{ID: h, Title: h}},
		Coordinator: policy.Coordinator{Consulted: true, Error: h},
		Approvers:   h,
		LockWaits:   []LockWait{{ID: h, Who: h, Operation: h}},
	}
}

// renderings are every markdown text report produces from a report and a name:
// the comment section, the check run's summary and text, a project that could
// not be planned, and the exported helpers.
func renderings(r *Report, h string, budget int) map[string]string {
	detail := "Error: Invalid value for " + h + "\n\n  on main.tf line 1:\n" + h + "\n"
	diags := []Diagnostic{
		{Severity: "error", Summary: h, Detail: h + "\n" + h, File: h, Line: 3, Context: h, Snippet: h},
		{Severity: "warning", Summary: "Deprecated " + h, Detail: "use " + h},
		{Severity: h, Summary: h},
	}
	return map[string]string{
		"not planned diagnostics":         NotPlannedWithDiagnostics(h, detail, diags, true, budget),
		"not planned diagnostics summary": NotPlannedWithDiagnostics("", detail, diags, false, budget),
		"markdown":                        r.Markdown(budget),
		"check summary":                   r.CheckSummary(budget),
		"check text":                      r.CheckText(budget),
		"not planned":                     NotPlanned(h, detail, budget),
		"not planned summary":             NotPlanned("", detail, budget),
		"helpers":                         "Stream " + Code(h) + " said " + Escape(h) + ":\n\n" + CodeBlock(detail),
	}
}

// sentinel follows every rendering: it must stay a heading of its own, so
// nothing a rendering leaves open (a fence, an HTML block) swallows what follows.
const sentinel = reporttest.Sentinel

var gfm = reporttest.GFM

func TestHostileNamesCannotSteerTheMarkdown(t *testing.T) {
	benign := hostileReport("benign")
	for i, h := range hostile {
		t.Run(fmt.Sprintf("%02d %.30q", i, h), func(t *testing.T) {
			r := hostileReport(h)
			for _, budget := range []int{10 << 20, 0, 5000, 600, 150, 40} {
				got := renderings(r, h, budget)
				for name, md := range got {
					limit := budget
					if limit == 0 {
						limit = MaxCommentChars
					}
					if name != "helpers" {
						require.LessOrEqual(t, len(md), limit, "%s fits its budget", name)
					}
					requireInert(t, md+sentinel, name)
				}
				if budget != 10<<20 {
					continue
				}
				// With room for everything, a hostile name gives the same document
				// structure as a benign one: it adds no node, cell or line.
				want := renderings(benign, "benign", budget)
				for name, md := range got {
					// Terraform's error text has lines of its own; everything else is one line per entry.
					lines := !strings.HasPrefix(name, "not planned") && name != "helpers"
					require.Equal(t, structure(want[name]+sentinel, lines), structure(md+sentinel, lines), "%s: the structure of the benign twin", name)
				}
				requireFaithful(t, got["markdown"], h)
			}
		})
	}
}

// requireInert parses md as GFM and fails on any node plan text could have made.
func requireInert(t *testing.T, md, name string) {
	t.Helper()
	inert.Require(t, md, name)
}

var inert = reporttest.Inert{
	OwnHTML:    regexp.MustCompile(`^(<details><summary>(Raw resource changes|Other resource changes|Terraform's diagnostics) \(\d+\)</summary>|</details>)$`),
	OwnHeading: regexp.MustCompile(`^((✅|❌) Project |Violations|Warnings|Exceptions applied|Producer-quiesce attestations used|Labels not counted|Terraform state locks waited on|Sentinel)$`),
}

// structure lists a document's nodes, code content and text left out (with the
// number of lines of code and HTML blocks when lines is set): the shape a name
// must not change.
func structure(md string, lines bool) []string {
	src := []byte(md)
	var out []string
	_ = ast.Walk(gfm.Parser().Parse(text.NewReader(src)), func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n.Kind() {
		case ast.KindText, ast.KindString:
			return ast.WalkContinue, nil
		case ast.KindCodeSpan:
			out = append(out, "CodeSpan")
			return ast.WalkSkipChildren, nil
		case ast.KindFencedCodeBlock, ast.KindHTMLBlock:
			if lines {
				out = append(out, fmt.Sprintf("%s(%d lines)", n.Kind(), n.Lines().Len()))
			} else {
				out = append(out, n.Kind().String())
			}
			return ast.WalkSkipChildren, nil
		}
		out = append(out, n.Kind().String())
		return ast.WalkContinue, nil
	})
	return out
}

// requireFaithful checks that a name short enough to show whole is shown as it
// is, inside the project heading's code span.
func requireFaithful(t *testing.T, md, h string) {
	t.Helper()
	if len([]rune(h)) > nameCap || strings.Contains(h, "<!--") {
		return
	}
	src := []byte(md)
	doc := gfm.Parser().Parse(text.NewReader(src))
	heading := doc.FirstChild()
	require.Equal(t, ast.KindHeading, heading.Kind())
	span := heading.LastChild()
	require.Equal(t, ast.KindCodeSpan, span.Kind())
	var b strings.Builder
	for c := span.FirstChild(); c != nil; c = c.NextSibling() {
		b.Write(c.(*ast.Text).Value(src))
	}
	want := mdtext.Sanitize(h)
	if want == "" {
		want = " "
	}
	require.Equal(t, want, b.String(), "the name shows as it is")
}

func TestTextCannotBeSteered(t *testing.T) {
	benign := hostileReport("benign").Text()
	for _, h := range hostile {
		got := hostileReport(h).Text()
		require.Equal(t, strings.Count(benign, "\n"), strings.Count(got, "\n"), "%q adds no line", h)
		for _, r := range got {
			require.True(t, r == '\n' || unicode.IsPrint(r) && !mdtext.Hidden(r), "%q: %U in the text", h, r)
		}
		if h == "@octocat" {
			require.Contains(t, got, "by octocat, valid", "actors are named, not mentioned")
			require.Contains(t, got, "then octocat comments", "approvers are named, not mentioned")
		}
	}
}
