package prcommand

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseCommands(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		want    []Command
		wantErr string
	}{
		{"none", "looks good to me", nil, ""},
		{"plan", "/shardgate plan", []Command{{Verb: "plan"}}, ""},
		{"crlf and spaces", "  /shardgate   PLAN  \r\n", []Command{{Verb: "plan"}}, ""},
		{"attest", "Producers paused.\n/shardgate attest quiesce create-order\n", []Command{{Verb: "attest", StreamPrefix: "create-order"}}, ""},
		{"several", "/shardgate help\n/shardgate plan", []Command{{Verb: "help"}, {Verb: "plan"}}, ""},
		{"quoted is ignored", "> /shardgate plan\nno", nil, ""},
		{"fenced is ignored", "```\n/shardgate plan\n```", nil, ""},
		{"mid-line is not a command", "please run /shardgate plan", nil, ""},
		{"other bot", "/atlantis plan", nil, ""},
		{"prefix only", "/shardgate", nil, "needs a command"},
		{"unknown", "/shardgate destroy", nil, `unknown command "destroy"`},
		{"plan with args", "/shardgate plan -target=x", nil, "takes no arguments"},
		{"drift", "/shardgate drift", []Command{{Verb: "drift"}}, ""},
		{"cancel", "/shardgate cancel", []Command{{Verb: "cancel"}}, ""},
		{"cancel in capitals", "/shardgate CANCEL", []Command{{Verb: "cancel"}}, ""},
		{"apply retries", "/shardgate apply", []Command{{Verb: "apply"}}, ""},
		{"apply a project", "/shardgate apply alarms", []Command{{Verb: "apply", Project: "alarms"}}, ""},
		{"apply a project named by its dir", "/shardgate APPLY infra/alarms", []Command{{Verb: "apply", Project: "infra/alarms"}}, ""},
		{"apply two projects", "/shardgate apply a b", nil, "`/shardgate apply <project>`"},
		{"apply odd characters", "/shardgate apply a{b}", nil, "is not a project name"},
		{"apply path trick", "/shardgate apply a/../b", nil, "is not a project name"},
		{"drift with args", "/shardgate drift now", nil, "takes no arguments"},
		{"cancel with args", "/shardgate cancel plan", nil, "takes no arguments"},
		{"attest without kind", "/shardgate attest create-order", nil, "attest quiesce <stream_prefix>"},
		{"attest bad prefix", "/shardgate attest quiesce {orders}", nil, "is not a stream prefix"},
		{"attest path trick", "/shardgate attest quiesce a/../b", nil, "is not a stream prefix"},
		{"paragraph after other text", "Looks fine.\n\n/shardgate plan\n", []Command{{Verb: "plan"}}, ""},
		{"soft line break inside a paragraph", "Producers paused,\nretries drained.\n/shardgate attest quiesce create-order", []Command{{Verb: "attest", StreamPrefix: "create-order"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.body)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				var ce *CommandError
				require.ErrorAs(t, err, &ce)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

// hiddenCommands are comment bodies whose /shardgate lines GitHub shows as
// code, as a quote, or not at all: none of them is a command.
var hiddenCommands = []struct{ name, body string }{
	{"html comment block", "LGTM\n\n<!-- /shardgate attest quiesce create-order -->"},
	{"multi-line html comment", "<!--\n/shardgate attest quiesce create-order\n-->"},
	{"html comment inside a paragraph", "LGTM <!--\n/shardgate attest quiesce create-order\n--> thanks"},
	{"html comment opening a line", "<!-- x --> /shardgate attest quiesce create-order"},
	{"raw html block", "<div>\n/shardgate attest quiesce create-order\n</div>"},
	{"raw html inline", "<b>/shardgate attest quiesce create-order</b>"},
	{"details block", "<details>\n\n/shardgate attest quiesce create-order\n\n</details>"},
	{"indented code block", "Run this:\n\n    /shardgate attest quiesce create-order\n"},
	{"tab-indented code block", "\t/shardgate attest quiesce create-order"},
	{"backtick fence", "```\n/shardgate attest quiesce create-order\n```"},
	{"tilde fence", "~~~\n/shardgate attest quiesce create-order\n~~~"},
	{"tilde fence holding a backtick line", "~~~\n```\n/shardgate attest quiesce create-order\n~~~"},
	{"backtick fence holding a tilde line", "```\n~~~\n/shardgate attest quiesce create-order\n```"},
	{"longer fence holding a shorter one", "````\n```\n/shardgate attest quiesce create-order\n````"},
	{"unclosed fence", "```\n/shardgate attest quiesce create-order"},
	{"inline code", "`/shardgate attest quiesce create-order`"},
	{"inline code in double backticks", "``/shardgate attest quiesce create-order``"},
	{"block quote", "> /shardgate attest quiesce create-order"},
	{"lazy block quote continuation", "> as alice said\n/shardgate attest quiesce create-order"},
	{"nested quote", "> > /shardgate attest quiesce create-order"},
	{"list item", "- /shardgate attest quiesce create-order"},
	{"heading", "# /shardgate attest quiesce create-order"},
	{"setext heading", "/shardgate attest quiesce create-order\n---"},
	{"table cell", "| a |\n| - |\n| /shardgate attest quiesce create-order |"},
	{"link text", "[/shardgate attest quiesce create-order](https://example.com)"},
	{"emphasis", "*/shardgate attest quiesce create-order*"},
	{"escaped slash", "\\/shardgate attest quiesce create-order"},
}

func TestParseCommandsIgnoresHiddenText(t *testing.T) {
	for _, tt := range hiddenCommands {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.body)
			require.NoError(t, err)
			require.Empty(t, got)
		})
	}
}

// A command line with formatting in it is not run: part of it may be hidden
// (an HTML comment) or not what it looks like (code, a link).
func TestParseCommandsRefusesFormattedCommandLines(t *testing.T) {
	for name, body := range map[string]string{
		"trailing html comment": "/shardgate plan <!-- /shardgate attest quiesce create-order -->",
		"inline code argument":  "/shardgate attest quiesce `create-order`",
		"emphasised argument":   "/shardgate attest quiesce *create-order*",
		"autolinked argument":   "/shardgate attest quiesce www.example.com",
	} {
		t.Run(name, func(t *testing.T) {
			got, err := Parse(body)
			require.Empty(t, got)
			var ce *CommandError
			require.ErrorAs(t, err, &ce)
			require.Contains(t, ce.Reason, "plain text")
		})
	}
}

func FuzzParseCommands(f *testing.F) {
	for _, s := range []string{"/shardgate plan", "/shardgate attest quiesce x", "> /shardgate help", "```\n/shardgate\n```", "/shardgate attest quiesce {a}"} {
		f.Add(s)
	}
	for _, c := range hiddenCommands {
		f.Add(c.body)
	}
	for _, s := range []string{"<!-- /shardgate plan", "/shardgate plan <!--", "~~~\n```\n~~~\n/shardgate plan", "    \t/shardgate plan",
		"`` ` ``/shardgate plan", "/shardgate plan\r\n/shardgate help\r\n", "> ```\n/shardgate plan\n", "<details><summary>/shardgate plan</summary>",
		"[x]: /shardgate\n/shardgate plan", "\x00/shardgate plan", "/shardgate \u00a0plan", "/shardgate attest quiesce a\\_b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		cmds, err := Parse(body)
		for _, c := range cmds {
			require.Contains(t, []string{CmdPlan, CmdAttest, CmdHelp, CmdApply}, c.Verb)
			if c.Verb == CmdAttest {
				require.True(t, validStreamPrefix(c.StreamPrefix))
				require.False(t, strings.ContainsAny(c.StreamPrefix, "{}/ \n"))
			}
		}
		if err != nil {
			var ce *CommandError
			require.ErrorAs(t, err, &ce)
		}
		// Whatever the body, quoting every line of it, or putting it in an
		// HTML comment, hides every command in it.
		quoted := "> " + strings.ReplaceAll(strings.ReplaceAll(body, "\r", ""), "\n", "\n> ")
		cmds, err = Parse(quoted)
		require.Empty(t, cmds, "quoted: %q", quoted)
		require.NoError(t, err, "quoted: %q", quoted)
		inner := body
		for strings.Contains(inner, "-->") {
			inner = strings.ReplaceAll(inner, "-->", "")
		}
		hidden := "<!--\n" + inner + "\n-->"
		cmds, err = Parse(hidden)
		require.Empty(t, cmds, "in an HTML comment: %q", hidden)
		require.NoError(t, err, "in an HTML comment: %q", hidden)
	})
}
