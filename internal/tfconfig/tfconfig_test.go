package tfconfig

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func write(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
}

func TestReadFindsLocalCallsAndRequiredVersion(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{
		"live/app/main.tf": `
terraform {
  required_version = ">= 1.11.0"
  backend "s3" {}
}
module "net" {
  source = "../../modules/net"
}
module "again" {
  source = "../../modules/net/"
}
module "registry" {
  source  = "terraform-aws-modules/vpc/aws"
  version = "5.0.0"
}
module "git" {
  source = "git::https://example.com/m.git"
}
module "outside" {
  source = "../../../elsewhere"
}
`,
		"live/app/extra.tf.json": `{"module": {"db": {"source": "./db"}}, "terraform": {"required_version": "< 2.0.0"}}`,
		"live/app/notes.md":      "not terraform",
	})
	m, err := Read(root, "live/app")
	require.NoError(t, err)
	require.Equal(t, []string{"live/app/db", "modules/net"}, m.LocalCalls)
	require.ElementsMatch(t, []string{">= 1.11.0", "< 2.0.0"}, m.RequiredVersions)
}

func TestReadMissingDirIsEmpty(t *testing.T) {
	m, err := Read(t.TempDir(), "nowhere")
	require.NoError(t, err)
	require.Empty(t, m.LocalCalls)
}

func TestReadNamesAFileThatDoesNotParse(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{"p/main.tf": "module \"x\" {\n  source = \n"})
	_, err := Read(root, "p")
	require.ErrorContains(t, err, "p/main.tf")
}
