package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// readmeBlocks are the README's fenced blocks of one language.
func readmeBlocks(t *testing.T, lang string) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	var out []string
	for _, block := range strings.Split(string(raw), "```"+lang+"\n")[1:] {
		end := strings.Index(block, "\n```")
		require.GreaterOrEqual(t, end, 0, "README.md: an unclosed %s block", lang)
		out = append(out, block[:end+1])
	}
	return out
}

// The README's systemd unit starts `shardgate serve` as the container image
// does, its flags are serve's, and its state directory holds the store of the
// README's configuration.
func TestReadmeSystemdUnit(t *testing.T) {
	var unit string
	for _, b := range readmeBlocks(t, "ini") {
		if strings.Contains(b, "[Service]") {
			unit = b
		}
	}
	require.NotEmpty(t, unit, "README.md has no systemd unit")
	keys := map[string]string{}
	for _, line := range strings.Split(unit, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			keys[k] = v
		}
	}
	argv := strings.Fields(keys["ExecStart"])
	require.GreaterOrEqual(t, len(argv), 2, unit)
	require.Equal(t, "/usr/local/bin/shardgate", argv[0])

	docker, err := os.ReadFile(filepath.Join("..", "..", "Dockerfile"))
	require.NoError(t, err)
	cmdLine := regexp.MustCompile(`(?m)^CMD (\[.*\])$`).FindSubmatch(docker)
	require.Len(t, cmdLine, 2)
	var imageArgs []string
	require.NoError(t, json.Unmarshal(cmdLine[1], &imageArgs))
	require.Equal(t, imageArgs, argv[1:], "the unit runs what the image runs")

	// The flags are serve's: with a configuration that is missing, serve
	// names the file (a flag it did not know would be named instead).
	args := append([]string(nil), argv[1:]...)
	missing := filepath.Join(t.TempDir(), "config.yaml")
	for i, a := range args {
		if a == "/etc/shardgate/config.yaml" {
			args[i] = missing
		}
	}
	code, _, errOut := run(t, args...)
	require.Equal(t, exitUsage, code)
	require.Contains(t, errOut, missing)

	var cfg struct {
		Store struct {
			Path string `yaml:"path"`
		} `yaml:"store"`
	}
	var found bool
	for _, b := range readmeBlocks(t, "yaml") {
		if strings.Contains(b, "\ngithub:") {
			require.NoError(t, yaml.Unmarshal([]byte(b), &cfg))
			found = true
		}
	}
	require.True(t, found, "README.md has no server configuration")
	state := "/var/lib/" + keys["StateDirectory"] + "/"
	require.True(t, strings.HasPrefix(cfg.Store.Path, state), "store.path %s is in the unit's StateDirectory %s", cfg.Store.Path, state)
	require.Equal(t, "HOME="+strings.TrimSuffix(state, "/"), keys["Environment"], "terraform's CLI configuration and plugin cache live under HOME")
}
