package repoconfig

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/policy"
)

func TestParse(t *testing.T) {
	cfg, err := Parse(".shardgate.yaml", []byte(`
version: 1
projects:
  - name: streams
    dir: examples/streams/
    var_files: [prod.tfvars]
  - name: staging
    dir: examples/streams
    workspace: staging
    apply: manual
streams:
  duplicate_tolerant: [metrics, audit-log]
policy:
  max_shard_delta: 8
  max_scale_factor: 3
  policy_dirs: [policies]
`))
	require.NoError(t, err)
	require.True(t, cfg.Explicit)
	require.Equal(t, []Project{
		{Name: "streams", Dir: "examples/streams", Workspace: "default", VarFiles: []string{"prod.tfvars"}, Apply: ApplyOnMerge},
		{Name: "staging", Dir: "examples/streams", Workspace: "staging", Apply: ApplyManual},
	}, cfg.Projects)
	require.Equal(t, ApplyManual, cfg.ApplyModeOf("staging"))
	require.Equal(t, ApplyOnMerge, cfg.ApplyModeOf("streams"), "on_merge is the default")
	require.Equal(t, ApplyOnMerge, cfg.ApplyModeOf("not/listed"), "a directory planned without a projects list")
	require.Equal(t, 8, cfg.Policy.MaxShardDelta)
	require.Equal(t, 3.0, cfg.Policy.MaxScaleFactor)
	require.Equal(t, []string{"audit-log", "metrics"}, cfg.Policy.DuplicateTolerantStreams)
	require.Equal(t, []string{"policies"}, cfg.PolicyDirs)
	p, ok := cfg.ProjectByName("staging")
	require.True(t, ok)
	require.Equal(t, "staging", p.Workspace)
}

func TestParseDefaults(t *testing.T) {
	cfg, err := Parse("x", []byte("version: 1\n"))
	require.NoError(t, err)
	require.Equal(t, 4, cfg.Policy.MaxShardDelta)
	require.Equal(t, 2.0, cfg.Policy.MaxScaleFactor)
	require.Empty(t, cfg.Projects)
}

func TestParseReportsEveryProblem(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string
	}{
		{"empty", "", []string{"file is empty"}},
		{"no version", "projects: []\n", []string{"version is missing"}},
		{"wrong version", "version: 2\n", []string{"version 2 is not supported"}},
		{"unknown field", "version: 1\nprojject: []\n", []string{"2:1: projject: unknown key (did you mean projects?)"}},
		{"wrong type", "version: 1\npolicy:\n  max_shard_delta: many\n", []string{`3:20: policy.max_shard_delta: want a whole number, got "many"`}},
		{"not yaml", "version: [1\n", []string{"the [ list opened at 1:10 is not closed"}},
		{"two documents", "version: 1\n---\nversion: 1\n", []string{"more than one YAML document"}},
		{"many problems", `
version: 1
projects:
  - dir: /abs
  - name: a
    dir: ../outside
    var_files: [""]
  - name: a
    dir: ok
    apply: on_push
streams:
  duplicate_tolerant: ["{bad}"]
policy:
  max_shard_delta: 0
  max_scale_factor: 0.5
  policy_dirs: ["../x"]
`, []string{
			"projects[0].name is missing",
			`projects[0].dir "/abs" must be a relative`,
			`projects[1].dir "../outside" leaves the repository`,
			"projects[1].var_files[0] is missing",
			`projects[2].name "a" is used twice`,
			`projects[2].apply "on_push" is not a way to apply: use "on_merge" or "manual"`,
			`streams.duplicate_tolerant[0] "{bad}" is not a stream prefix`,
			"policy.max_shard_delta must be at least 1, got 0",
			"policy.max_scale_factor must be at least 1.0, got 0.5",
			`policy.policy_dirs[0] "../x" leaves the repository`,
		}},
		{"duplicate project dir", "version: 1\nprojects:\n  - {name: a, dir: x}\n  - {name: b, dir: x/}\n",
			[]string{`dir "x/" and workspace "default" are already a project`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(".shardgate.yaml", []byte(tt.yaml))
			require.Error(t, err)
			var cerr *Error
			require.ErrorAs(t, err, &cerr)
			require.Equal(t, ".shardgate.yaml", cerr.Source)
			for _, w := range tt.want {
				require.Contains(t, err.Error(), w)
			}
			if tt.name == "many problems" {
				require.Len(t, cerr.Problems, len(tt.want))
			}
		})
	}
}

func TestParseRefusesHugeFile(t *testing.T) {
	_, err := Parse("x", []byte("version: 1\n"+strings.Repeat("#", MaxSize)))
	require.ErrorContains(t, err, "larger than")
}

func TestPolicyOver(t *testing.T) {
	server := policy.Config{MaxShardDelta: 2, MaxScaleFactor: 1.5, DuplicateTolerantStreams: []string{"metrics"}}
	cfg, err := Parse("x", []byte("version: 1\npolicy:\n  max_scale_factor: 3\nstreams:\n  duplicate_tolerant: [logs, metrics]\n"))
	require.NoError(t, err)
	got := cfg.PolicyOver(server)
	require.Equal(t, 2, got.MaxShardDelta, "not stated by the repo: the server's value stays")
	require.Equal(t, 3.0, got.MaxScaleFactor)
	require.Equal(t, []string{"logs", "metrics"}, got.DuplicateTolerantStreams)
	require.Equal(t, server, Default().PolicyOver(server))
}
