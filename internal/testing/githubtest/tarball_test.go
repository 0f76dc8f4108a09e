package githubtest

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/google/go-github/v60/github"
	"github.com/stretchr/testify/require"
)

// readTarball downloads a tarball link and returns its entries by name.
func readTarball(t *testing.T, link string) map[string]string {
	t.Helper()
	resp, err := http.Get(link)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "application/x-gzip", resp.Header.Get("Content-Type"))
	zr, err := gzip.NewReader(resp.Body)
	require.NoError(t, err)
	tr := tar.NewReader(zr)
	files := map[string]string{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		if h.Typeflag != tar.TypeReg {
			continue
		}
		b, err := io.ReadAll(tr)
		require.NoError(t, err)
		files[h.Name] = string(b)
	}
	return files
}

func TestTarballOfCommit(t *testing.T) {
	gh := New(t)
	g, pr := newRepoWithPR(t, gh)
	base, err := g.Resolve("main")
	require.NoError(t, err)
	client := newClient(t, gh, DefaultInstallationID)
	tests := []struct {
		name    string
		ref     string
		sha     string
		present string
		absent  string
	}{
		{"head sha", pr.HeadSHA, pr.HeadSHA, "stacks/payments/main.tf", ""},
		{"branch", "change", pr.HeadSHA, "stacks/payments/main.tf", ""},
		{"base branch", "main", base, ".shardgate.yaml", "stacks/payments/main.tf"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			link, resp, err := client.Repositories.GetArchiveLink(context.Background(), "acme", "infra", github.Tarball, &github.RepositoryContentGetOptions{Ref: tt.ref}, 0)
			require.NoError(t, err)
			require.Equal(t, http.StatusFound, resp.StatusCode)
			files := readTarball(t, link.String())
			prefix := "acme-infra-" + tt.sha[:7] + "/"
			require.Contains(t, files, prefix+tt.present)
			if tt.absent != "" {
				require.NotContains(t, files, prefix+tt.absent)
			}
			for name := range files {
				require.Regexp(t, "^"+prefix, name)
			}
		})
	}

	t.Run("second push is served by sha", func(t *testing.T) {
		g.Checkout("change")
		g.WriteFile("stacks/orders/main.tf", "# pushed\n")
		g.Commit("push")
		g.Checkout("main")
		newHead := gh.SyncPR("acme", "infra", pr.Number)
		require.NotEqual(t, pr.HeadSHA, newHead)
		link, _, err := client.Repositories.GetArchiveLink(context.Background(), "acme", "infra", github.Tarball, &github.RepositoryContentGetOptions{Ref: newHead}, 0)
		require.NoError(t, err)
		files := readTarball(t, link.String())
		require.Equal(t, "# pushed\n", files["acme-infra-"+newHead[:7]+"/stacks/orders/main.tf"])
	})

	t.Run("unknown ref", func(t *testing.T) {
		_, resp, err := client.Repositories.GetArchiveLink(context.Background(), "acme", "infra", github.Tarball, &github.RepositoryContentGetOptions{Ref: "nope"}, 0)
		require.Error(t, err)
		require.Equal(t, http.StatusNotFound, resp.StatusCode)
	})

	t.Run("download without a valid link token", func(t *testing.T) {
		resp, err := http.Get(gh.URL() + "_codeload/acme/infra/legacy.tar.gz/" + pr.HeadSHA + "?token=forged")
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		require.Equal(t, http.StatusNotFound, resp.StatusCode)
		reqs := gh.Requests()
		require.Equal(t, http.StatusNotFound, reqs[len(reqs)-1].Status)
	})
}
