package drift

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/policy/report/reporttest"
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
				requireInert(t, md+reporttest.Sentinel, name)
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
	inert.Require(t, md, name)
}

var inert = reporttest.Inert{
	OwnHTML:    regexp.MustCompile(`^(<!-- shardgate:drift project(-sha256)?=[^ ]* -->|<details><summary>terraform's diagnostics</summary>|</details>)$`),
	OwnHeading: regexp.MustCompile(`^(Drift in project |Sentinel)$`),
}
