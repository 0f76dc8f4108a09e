package policy

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/tester"
	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/planparse"
	policyfiles "github.com/shardgate/shardgate/rego"
)

func newEngine(t *testing.T, opts ...Option) *Engine {
	t.Helper()
	e, err := New(opts...)
	require.NoError(t, err)
	return e
}

func TestRulesBuiltin(t *testing.T) {
	e := newEngine(t)

	ids := make([]string, 0, len(e.Rules()))
	for _, r := range e.Rules() {
		ids = append(ids, r.ID)
		require.NotEmpty(t, r.Title, r.ID)
		require.NotEmpty(t, r.Description, r.ID)
	}
	require.Equal(t, []string{
		"active_migration", RuleConflictingShardCount, RuleCoordinatorUnreachable, RuleDrift, RuleIncompletePlan,
		RuleInvalidShardCount, "metadata_version_regressed", RuleNoDestroy, "no_live_members", RuleOtherResourceDestroyed,
		RuleQuiesceAttestation, RuleShardDelta, RuleTaintedReplace, RuleUnknownValue,
	}, ids)

	waivable := map[string]bool{RuleNoDestroy: true, RuleShardDelta: true, RuleQuiesceAttestation: true}
	for _, r := range e.Rules() {
		t.Run(r.ID, func(t *testing.T) {
			require.Equal(t, waivable[r.ID], r.Waivable)
			if r.Waivable {
				require.Equal(t, "policy-exception/"+r.ID, r.ExceptionLabel)
			} else {
				require.Empty(t, r.ExceptionLabel)
			}
		})
	}

	info, ok := e.Rule(RuleNoDestroy)
	require.True(t, ok)
	require.Equal(t, "No destroy", info.Title)
	_, ok = e.Rule("no_such_rule")
	require.False(t, ok)
}

func TestUserPolicyDir(t *testing.T) {
	e := newEngine(t, WithPolicyDirs(filepath.Join("testdata", "userpolicy")))

	maxShards, ok := e.Rule("max_shards")
	require.True(t, ok)
	require.Equal(t, RuleInfo{
		ID: "max_shards", Title: "Maximum shard count", Description: "No stream may have more than 32 shards.",
		Waivable: true, ExceptionLabel: "policy-exception/max_shards",
	}, maxShards)

	naming, ok := e.Rule("group_naming")
	require.True(t, ok, "policies in subdirectories are loaded")
	require.Equal(t, RuleInfo{ID: "group_naming", Title: "group_naming"}, naming)

	_, ok = e.Rule("max_shards_test")
	require.False(t, ok, "_test.rego files are not evaluated")
	_, ok = e.Rule(RuleNoDestroy)
	require.True(t, ok, "built-in rules stay loaded")

	create := planparse.Change{
		Address: "module.big.terraform_data.stream_group", StreamPrefix: "big", ConsumerGroup: "Big_Group",
		Action: planparse.ActionCreate, ShardsAfter: intp(64),
	}
	d, err := e.Evaluate(context.Background(), Request{ChangeSet: &planparse.ChangeSet{Changes: []planparse.Change{create}}})
	require.NoError(t, err)
	require.False(t, d.Allowed)
	require.Equal(t, []string{"group_naming", "max_shards"}, violationRules(d))
	require.Equal(t, "module.big.terraform_data.stream_group asks for 64 shards; the limit is 32", d.Violations[1].Message)
	require.True(t, d.Violations[1].Waivable)
	require.False(t, d.Violations[0].Waivable)

	// The user's waivable rule is waived by its own label like a built-in one.
	d, err = e.Evaluate(context.Background(), Request{
		ChangeSet: &planparse.ChangeSet{Changes: []planparse.Change{create}},
		Labels:    []Label{{Name: "policy-exception/max_shards", Actor: "lead", Counted: true}},
	})
	require.NoError(t, err)
	require.Equal(t, []string{"group_naming"}, violationRules(d))
	require.Len(t, d.ExceptionsApplied, 1)
	require.Equal(t, "max_shards", d.ExceptionsApplied[0].Rule)

	// A user warning without stream fields is still a warning.
	one := create
	one.ConsumerGroup, one.ShardsAfter = "ok-group", intp(1)
	d, err = e.Evaluate(context.Background(), Request{ChangeSet: &planparse.ChangeSet{Changes: []planparse.Change{one}}})
	require.NoError(t, err)
	require.True(t, d.Allowed)
	require.Equal(t, []Warning{{Rule: "group_naming", Title: "group_naming", Message: "module.big.terraform_data.stream_group starts with a single shard"}}, d.Warnings)
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name    string
		opts    []Option
		wantErr []string
	}{
		{
			name:    "syntax error",
			opts:    []Option{WithPolicyDirs(filepath.Join("testdata", "badsyntax"))},
			wantErr: []string{"load policy dir testdata/badsyntax", "broken.rego:", "rego_parse_error"},
		},
		{
			name:    "missing dir",
			opts:    []Option{WithPolicyDirs(filepath.Join("testdata", "no_such_dir"))},
			wantErr: []string{"load policy dir testdata/no_such_dir"},
		},
		{
			name:    "helpers package is reserved",
			opts:    []Option{WithPolicyDirs(filepath.Join("testdata", "reserved"))},
			wantErr: []string{"package shardgate.lib is reserved"},
		},
		{
			name:    "rule head reaching into the helpers",
			opts:    []Option{WithPolicyDirs(filepath.Join("testdata", "refhead"))},
			wantErr: []string{"package shardgate is reserved"},
		},
		{
			name:    "built-in rule id",
			opts:    []Option{WithPolicyDirs(filepath.Join("testdata", "builtinid"))},
			wantErr: []string{"rule id no_destroy is built in"},
		},
		{
			name:    "nested rule package",
			opts:    []Option{WithPolicyDirs(filepath.Join("testdata", "nested"))},
			wantErr: []string{"shardgate.rules.team.limits", "rule packages must be shardgate.rules.<rule id>"},
		},
		{
			name:    "exception label of another rule",
			opts:    []Option{WithPolicyDirs(filepath.Join("testdata", "badlabel"))},
			wantErr: []string{`rule bad_label: METADATA custom.exception_label must be "policy-exception/bad_label"`},
		},
		{
			name:    "network built-in",
			opts:    []Option{WithPolicyDirs(filepath.Join("testdata", "network"))},
			wantErr: []string{"compile policies", "http.send"},
		},
		{
			name:    "no policies at all",
			opts:    []Option{WithoutBuiltin()},
			wantErr: []string{"no policy files"},
		},
		{
			name:    "only helpers, no rule package",
			opts:    []Option{WithoutBuiltin(), WithPolicyDirs(filepath.Join("testdata", "helpersonly"))},
			wantErr: []string{"no package shardgate.rules.<rule id>"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := New(tt.opts...)
			require.Error(t, err)
			require.Nil(t, e)
			for _, want := range tt.wantErr {
				require.Contains(t, err.Error(), want)
			}
		})
	}
}

func violationRules(d Decision) []string {
	ids := make([]string, 0, len(d.Violations))
	for _, v := range d.Violations {
		ids = append(ids, v.Rule)
	}
	return ids
}

func intp(n int) *int { return &n }

// TestUserPolicyRegoTests runs the example user policy's own Rego tests (the one
// docs/policy-input.md shows) with the engine's compiler.
func TestUserPolicyRegoTests(t *testing.T) {
	modules, err := loadBuiltin(false)
	require.NoError(t, err)
	dir := filepath.Join("testdata", "userpolicy")
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(p) != ".rego" {
			return err
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		m, err := ast.ParseModuleWithOpts(p, string(src), policyfiles.ParserOptions)
		modules[p] = m
		return err
	}))
	results, err := tester.NewRunner().SetCompiler(policyfiles.NewCompiler()).SetModules(modules).RunTests(context.Background(), nil)
	require.NoError(t, err)
	ran := 0
	for r := range results {
		ran++
		require.NoError(t, r.Error, r.Name)
		require.False(t, r.Fail, r.Name)
	}
	require.Equal(t, 2, ran)
}

// TestUserFileCannotReplaceBuiltin: a user directory laid out like shardgate's own
// (a file rego/no_destroy.rego in another package) must not replace the built-in
// module, which would silently drop the no_destroy rule.
func TestUserFileCannotReplaceBuiltin(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(root, "rego"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "rego", "no_destroy.rego"), []byte("package myorg.nothing\n\nx := 1\n"), 0o644))
	t.Chdir(root)

	e, err := New(WithPolicyDirs("rego"))
	require.ErrorContains(t, err, "rego/no_destroy.rego has the name of a built-in policy")
	require.Nil(t, e)
}

func TestSameDirTwice(t *testing.T) {
	dir := filepath.Join("testdata", "userpolicy")
	e := newEngine(t, WithPolicyDirs(dir, dir+"/"))
	_, ok := e.Rule("max_shards")
	require.True(t, ok)
}
