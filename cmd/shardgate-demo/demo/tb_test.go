package demo

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestProgramTB(t *testing.T) {
	tests := []struct {
		name      string
		story     func(p *programTB, reached *bool) error
		wantErr   string
		wantOut   string
		wantReach bool
	}{
		{
			name:      "a story that returns",
			story:     func(p *programTB, reached *bool) error { *reached = true; return nil },
			wantReach: true,
		},
		{
			name: "Fatalf ends the story and becomes its error",
			story: func(p *programTB, reached *bool) error {
				p.Fatalf("githubtest: %s/%s was not added", "acme", "streams")
				*reached = true
				return nil
			},
			wantErr: "githubtest: acme/streams was not added",
		},
		{
			name: "Errorf is printed and the story goes on",
			story: func(p *programTB, reached *bool) error {
				p.Errorf("githubtest: request outside the subset: %s", "GET /nope")
				*reached = true
				return nil
			},
			wantOut:   "error: githubtest: request outside the subset: GET /nope\n",
			wantReach: true,
		},
		{
			name:    "a panic becomes an error",
			story:   func(p *programTB, reached *bool) error { var m map[string]int; m["x"] = 1; return nil },
			wantErr: "demo: internal error: assignment to entry in nil map",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			p := newProgramTB(t.TempDir(), &out)
			reached := false
			err := p.runStory(func() error { return tt.story(p, &reached) })
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
			} else {
				require.NoError(t, err)
			}
			require.Equal(t, tt.wantReach, reached)
			require.Equal(t, tt.wantOut, out.String())
		})
	}
}

func TestProgramTBCleanupsAndTempDirs(t *testing.T) {
	root := t.TempDir()
	p := newProgramTB(root, &bytes.Buffer{})
	var order []string
	p.Cleanup(func() { order = append(order, "first") })
	p.Cleanup(func() { order = append(order, "second") })
	a, b := p.TempDir(), p.TempDir()
	require.NotEqual(t, a, b)
	for _, d := range []string{a, b} {
		require.Equal(t, root, filepath.Dir(d))
		info, err := os.Stat(d)
		require.NoError(t, err)
		require.True(t, info.IsDir())
	}
	p.close()
	require.Equal(t, []string{"second", "first"}, order, "last registered runs first")
	p.close()
	require.Len(t, order, 2, "cleanups run once")
}

func TestHeadlines(t *testing.T) {
	body := strings.Join([]string{
		"<!-- shardgate -->", "## shardgate", "",
		"**Head** `1dcba87` · **Status:** merged by alice; applying in merge order, one stream at a time.", "",
		"### Apply", "", "| Project | State | Detail |", "|---|---|---|",
		"| `streams` | 🔄 converging | waiting until stream `create-order` is complete and safe at 16 shards |", "",
		"### ✅ Project `streams`", "", "✅ **Allowed: 2 coordinator changes (2 scale); 2 exceptions applied**", "",
		"| Stream | Group | Action | Shards | Note |", "|---|---|---|---|---|", "| `create-order` | `audit` | scale | 4 → 16 |  |",
	}, "\n")
	require.Equal(t, strings.Join([]string{
		"**Head** `1dcba87` · **Status:** merged by alice; applying in merge order, one stream at a time.",
		"| `streams` | 🔄 converging | waiting until stream `create-order` is complete and safe at 16 shards |",
		"✅ **Allowed: 2 coordinator changes (2 scale); 2 exceptions applied**",
	}, "\n"), headlines(body))
	require.Equal(t, "| `streams` | 🔄 converging | waiting until stream `create-order` is complete and safe at 16 shards |", applyRow(body))
	require.Empty(t, applyRow("✅ **Allowed: 1 coordinator change**"))
}

func TestRunNeedsTheExampleModule(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		wantErr string
	}{
		{name: "module missing", opts: Options{ModuleDir: filepath.Join(t.TempDir(), "nope")}, wantErr: "the example module"},
		{name: "unknown stopping point", opts: Options{Until: "merged"}, wantErr: `unknown stopping point "merged"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			tt.opts.Out = &out
			_, err := Run(t.Context(), tt.opts)
			require.ErrorContains(t, err, tt.wantErr)
			require.Empty(t, out.String(), "nothing started")
		})
	}
}
