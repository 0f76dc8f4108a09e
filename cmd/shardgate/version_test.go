package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestVersion(t *testing.T) {
	code, out, _ := run(t, "version")
	require.Equal(t, exitOK, code)
	require.Regexp(t, `(?m)^shardgate \S+\ncommit \S+\ngo go1\.\S+\nopa v1\.\S+$`, out)
	code, _, errOut := run(t, "version", "extra")
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, "unexpected argument")
}

func TestAppManifest(t *testing.T) {
	code, out, _ := run(t, "app-manifest", "--url", "https://shardgate.example.test/", "--name", "gate")
	require.Equal(t, exitOK, code)
	var m struct {
		Name               string            `json:"name"`
		HookAttributes     map[string]any    `json:"hook_attributes"`
		DefaultPermissions map[string]string `json:"default_permissions"`
		DefaultEvents      []string          `json:"default_events"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &m))
	require.Equal(t, "gate", m.Name)
	require.Equal(t, "https://shardgate.example.test/webhook", m.HookAttributes["url"])
	require.NotContains(t, m.DefaultPermissions, "administration", "least privilege")
	for _, args := range [][]string{{"app-manifest"}, {"app-manifest", "--url", "ftp://x"}, {"app-manifest", "--url", "not a url"}} {
		code, _, errOut := run(t, args...)
		require.Equal(t, exitUsage, code, args)
		require.NotEmpty(t, errOut)
	}
}
