package bot

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/shardgate/shardgate/ghapp"
	"github.com/shardgate/shardgate/pullreq"
	"github.com/shardgate/shardgate/repoconfig"
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
	return selectProjects(repo, files), nil
}

// selectProjects picks the projects a change touches. With configured projects:
// those with a changed file under their dir, or all of them when a .tf file
// outside every project changed (a shared module). Without: every directory
// holding a changed .tf or .tfvars file.
func selectProjects(cfg *repoconfig.Config, files []string) []repoconfig.Project {
	if len(cfg.Projects) > 0 {
		var out []repoconfig.Project
		sharedTF := false
		hit := map[string]bool{}
		for _, f := range files {
			inProject := false
			for _, p := range cfg.Projects {
				if p.Dir == "." || f == p.Dir || strings.HasPrefix(f, p.Dir+"/") {
					hit[p.Name] = true
					inProject = true
				}
			}
			if !inProject && isTerraformFile(f) {
				sharedTF = true
			}
		}
		for _, p := range cfg.Projects {
			if sharedTF || hit[p.Name] {
				out = append(out, p)
			}
		}
		return out
	}
	dirs := map[string]bool{}
	for _, f := range files {
		if isTerraformFile(f) {
			dirs[path.Dir(f)] = true
		}
	}
	var out []repoconfig.Project
	for d := range dirs {
		out = append(out, repoconfig.Project{Name: d, Dir: d, Workspace: repoconfig.DefaultWorkspace})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Dir < out[j].Dir })
	return out
}

func isTerraformFile(f string) bool {
	return strings.HasSuffix(f, ".tf") || strings.HasSuffix(f, ".tfvars") || strings.HasSuffix(f, ".tf.json")
}
