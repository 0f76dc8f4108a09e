package plan

import (
	"context"
	"fmt"

	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/policy/repoconfig"
)

// changedFiles lists the files a pull request changes (GitHub caps this at 3000).
func changedFiles(ctx context.Context, gh ghapp.PullRequests, ref pullreq.Ref) ([]string, error) {
	var files []string
	page := 0
	for read := 0; read < 30; read++ {
		fs, err := gh.ListPullRequestFiles(ctx, ref.Owner, ref.Repo, ref.Number, page)
		if err != nil {
			return nil, fmt.Errorf("list files of %s: %w", ref, err)
		}
		files = append(files, fs.Items...)
		if fs.Next == 0 {
			break
		}
		page = fs.Next
	}
	return files, nil
}

// projectsOf are the projects the pull request's changed files touch, by the
// repository's configuration (read from the base branch).
func projectsOf(ctx context.Context, gh ghapp.PullRequests, ref pullreq.Ref, repo *repoconfig.Config) ([]repoconfig.Project, error) {
	files, err := changedFiles(ctx, gh, ref)
	if err != nil {
		return nil, err
	}
	return repoconfig.SelectProjects(repo, files), nil
}
