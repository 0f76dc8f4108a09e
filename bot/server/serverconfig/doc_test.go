package serverconfig

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// configKeys walks a raw configuration struct by its yaml tags and returns
// every leaf key as written in docs/config.md: "github.app_id",
// "coordinators[].url_prefix". A type that decodes itself (Secret) is a leaf.
func configKeys(t reflect.Type, prefix string) []string {
	var keys []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		key := prefix + name
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case ft.Kind() == reflect.Slice && isSection(ft.Elem()):
			keys = append(keys, configKeys(ft.Elem(), key+"[].")...)
		case isSection(ft):
			keys = append(keys, configKeys(ft, key+".")...)
		default:
			keys = append(keys, key)
		}
	}
	return keys
}

var yamlUnmarshaler = reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()

// isSection says whether t is a nested mapping of keys rather than a value.
func isSection(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && !reflect.PointerTo(t).Implements(yamlUnmarshaler)
}

var configDocRow = regexp.MustCompile("^\\| `([a-z_\\[\\].]+)` \\|")

// documentedConfigKeys reads the keys of docs/config.md's tables; planned are
// the rows marked *planned* (a change not merged yet).
func documentedConfigKeys(t *testing.T) (keys []string, planned map[string]bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "config.md"))
	require.NoError(t, err)
	planned = map[string]bool{}
	seen := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		m := configDocRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		require.False(t, seen[m[1]], "%s is documented twice", m[1])
		seen[m[1]] = true
		keys = append(keys, m[1])
		if strings.Contains(line, "*planned*") {
			planned[m[1]] = true
		}
	}
	require.NotEmpty(t, keys, "no key rows found in docs/config.md")
	sort.Strings(keys)
	return keys, planned
}

func TestConfigReferenceIsComplete(t *testing.T) {
	real := configKeys(reflect.TypeOf(rawConfig{}), "")
	sort.Strings(real)
	require.Contains(t, real, "coordinators[].password_file", "the walk reaches list entries")
	require.Contains(t, real, "coordinators[].password", "a Secret is a key, not a section")
	documented, planned := documentedConfigKeys(t)

	exists := map[string]bool{}
	for _, k := range real {
		exists[k] = true
	}
	isDocumented := map[string]bool{}
	for _, k := range documented {
		isDocumented[k] = true
	}
	for _, k := range real {
		require.True(t, isDocumented[k], "config key %s is not documented in docs/config.md", k)
		require.False(t, planned[k], "config key %s exists now: drop its *planned* mark in docs/config.md", k)
	}
	for _, k := range documented {
		require.True(t, exists[k] || planned[k],
			"docs/config.md documents %s, which the configuration does not have (mark a key of an unmerged change *planned*)", k)
	}
}

// The reference's complete example is a configuration shardgate accepts,
// once its files exist.
func TestConfigReferenceExampleParses(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "config.md"))
	require.NoError(t, err)
	doc := string(b)
	start := strings.Index(doc, "```yaml\n")
	require.GreaterOrEqual(t, start, 0)
	example := doc[start+len("```yaml\n"):]
	example = example[:strings.Index(example, "```")]

	dir := t.TempDir()
	files := map[string]string{
		"/etc/shardgate/app.pem":          "-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----\n",
		"/etc/shardgate/webhook-secret":   "hook-secret\n",
		"/etc/shardgate/coordinator-prod": "coord-pass\n",
		"/etc/shardgate/admin-token":      adminToken + "\n",
		"/etc/shardgate/status-token":     statusToken + "\n",
	}
	for path, content := range files {
		local := filepath.Join(dir, filepath.Base(path))
		require.NoError(t, os.WriteFile(local, []byte(content), 0o600))
		example = strings.ReplaceAll(example, path, local)
	}
	cfg, err := Parse("docs/config.md", []byte(example), noEnv)
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:9091", cfg.Admin.Listen)
	require.Equal(t, "127.0.0.1:9092", cfg.Status.Listen)
	require.Equal(t, DefaultQueueSize, cfg.QueueSize)

	var generic map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(example), &generic))
	for _, k := range []string{"github", "store", "terraform", "coordinators", "approvers", "policy", "queue", "apply", "admin"} {
		require.Contains(t, generic, k, "the complete example shows every section")
	}
}
