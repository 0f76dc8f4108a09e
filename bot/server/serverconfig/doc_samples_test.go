package serverconfig

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/policy/repoconfig"
)

// yamlSample is one ```yaml block of the documentation.
type yamlSample struct {
	where string // "README.md block 1"
	text  string
}

func yamlSamples(t *testing.T) []yamlSample {
	t.Helper()
	files := []string{filepath.Join("..", "..", "..", "README.md")}
	docs, err := filepath.Glob(filepath.Join("..", "..", "..", "docs", "*.md"))
	require.NoError(t, err)
	var out []yamlSample
	for _, f := range append(files, docs...) {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for i, block := range strings.Split(string(b), "```yaml\n")[1:] {
			end := strings.Index(block, "\n```")
			require.GreaterOrEqual(t, end, 0, "%s: an unclosed yaml block", f)
			out = append(out, yamlSample{where: filepath.Base(f) + " yaml block " + string(rune('1'+i)), text: block[:end+1]})
		}
	}
	return out
}

var shardgateFile = regexp.MustCompile(`/etc/shardgate/[a-z0-9.-]+`)

// Every YAML sample of the README and docs/ works as copied: a repository
// configuration parses and names directories, variable files and policy
// dirs this repository has; a server configuration (or a section of one)
// passes the server's validation once the files it names exist.
func TestDocumentationSamplesWorkAsCopied(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	samples := yamlSamples(t)
	require.NotEmpty(t, samples)
	seen := map[string]int{}
	for _, s := range samples {
		t.Run(s.where, func(t *testing.T) {
			switch {
			case regexp.MustCompile(`(?m)^(projects|streams):`).MatchString(s.text):
				seen["repo"]++
				checkRepoSample(t, root, s)
			case regexp.MustCompile(`(?m)^github:`).MatchString(s.text):
				seen["server"]++
				cfg, err := Parse(s.where, []byte(withFiles(t, s.text)), func(string) (string, bool) { return "a-value-from-the-environment", true })
				require.NoError(t, err, s.text)
				require.Positive(t, cfg.AppID)
			case strings.HasPrefix(s.text, "terraform:\n"), strings.HasPrefix(s.text, "status:\n"),
				strings.HasPrefix(s.text, "notifications:\n"):
				seen["server section"]++
				_, err := Parse(s.where, []byte(phaseConfig(t, withFiles(t, s.text))), func(string) (string, bool) { return "a-value-from-the-environment", true })
				require.NoError(t, err, s.text)
			default:
				t.Fatalf("%s is neither a .shardgate.yaml nor a server configuration: teach this test to load it\n%s", s.where, s.text)
			}
		})
	}
	require.Positive(t, seen["repo"], "the README's .shardgate.yaml is among them")
	require.Positive(t, seen["server"])
}

// withFiles replaces each /etc/shardgate/... path with a file holding a
// credential-like value.
func withFiles(t *testing.T, text string) string {
	dir := t.TempDir()
	return shardgateFile.ReplaceAllStringFunc(text, func(f string) string {
		return writeFile(t, dir, filepath.Base(f), "value-of-"+filepath.Base(f)+"-0123456789")
	})
}

func checkRepoSample(t *testing.T, root string, s yamlSample) {
	cfg, err := repoconfig.Parse(s.where, []byte(s.text))
	require.NoError(t, err, s.text)
	for _, p := range cfg.Projects {
		dir := filepath.Join(root, filepath.FromSlash(p.Dir))
		require.DirExists(t, dir, "project %s", p.Name)
		for _, vf := range p.VarFiles {
			require.FileExists(t, filepath.Join(dir, filepath.FromSlash(vf)), "project %s: var_files are relative to its dir", p.Name)
		}
	}
	if len(cfg.PolicyDirs) > 0 {
		var dirs []string
		for _, d := range cfg.PolicyDirs {
			dirs = append(dirs, filepath.Join(root, filepath.FromSlash(d)))
			require.DirExists(t, dirs[len(dirs)-1], "policy_dirs are relative to the repository root")
		}
		_, err := policy.New(policy.WithPolicyDirs(dirs...))
		require.NoError(t, err)
	}
}
