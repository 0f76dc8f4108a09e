package runner

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFindTerraformErrors(t *testing.T) {
	notTerraform := filepath.Join(t.TempDir(), "terraform")
	require.NoError(t, os.WriteFile(notTerraform, []byte("#!/bin/sh\necho hello\n"), 0o755))
	tests := []struct {
		name     string
		explicit string
		path     string
		want     string
	}{
		{name: "explicit path missing", explicit: "/nonexistent/terraform", want: "find terraform: /nonexistent/terraform: not found"},
		{name: "explicit path is not terraform", explicit: notTerraform, want: "cannot read its version (is it terraform or tofu?)"},
		{name: "nothing anywhere", path: t.TempDir(), want: "no terraform in"},
		{name: "only unusable candidates", path: filepath.Dir(notTerraform), want: "no usable terraform: find terraform: " + notTerraform + ": cannot read its version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.path != "" {
				t.Setenv("PATH", tt.path)
			}
			_, _, err := FindTerraform(tt.explicit, t.TempDir())
			var binErr *BinaryError
			require.ErrorAs(t, err, &binErr)
			require.ErrorContains(t, err, tt.want)
		})
	}
}
