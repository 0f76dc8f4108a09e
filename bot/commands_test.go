package bot

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
		{"attest without kind", "/shardgate attest create-order", nil, "attest quiesce <stream_prefix>"},
		{"attest bad prefix", "/shardgate attest quiesce {orders}", nil, "is not a stream prefix"},
		{"attest path trick", "/shardgate attest quiesce a/../b", nil, "is not a stream prefix"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseCommands(tt.body)
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

func FuzzParseCommands(f *testing.F) {
	for _, s := range []string{"/shardgate plan", "/shardgate attest quiesce x", "> /shardgate help", "```\n/shardgate\n```", "/shardgate attest quiesce {a}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		cmds, err := ParseCommands(body)
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
	})
}
