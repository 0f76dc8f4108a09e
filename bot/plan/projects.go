package plan

import (
	"context"
	"fmt"
	"slices"

	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/tfconfig"
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
// repository's configuration (read from the base branch) and the module
// graph of its head. tree gives the head's checkout ("" when it could not be
// fetched); it is called only when the module graph can add a project.
func projectsOf(ctx context.Context, gh ghapp.PullRequests, ref pullreq.Ref, pr ghapp.PullRequest, repo *repoconfig.Config,
	tree func() string) ([]repoconfig.Project, error) {
	files, err := changedFiles(ctx, gh, ref)
	if err != nil {
		return nil, err
	}
	return selectProjects(repo, repoconfig.Change{Files: files, Base: pr.BaseRef, DefaultBranch: pr.DefaultBranch}, tree), nil
}

// selectProjects are the projects change touches (its files, the base branch
// it lands on), following the local module graph of the commit tree checks
// out ("" when it could not be fetched) when that graph can add a project.
func selectProjects(repo *repoconfig.Config, ch repoconfig.Change, tree func() string) []repoconfig.Project {
	selected := repoconfig.SelectProjects(repo, ch)
	if len(ch.Files) == 0 || !modulesCanAdd(repo, selected, ch) {
		return selected
	}
	root := tree()
	if root == "" {
		// The head could not be fetched: every project the module graph
		// might add is planned, and its plan says the files are missing.
		ch.Calls = func(string) []string { return []string{"."} }
	} else {
		ch.Calls = moduleCalls(root)
	}
	return repoconfig.SelectProjects(repo, ch)
}

// modulesCanAdd says whether a project that is not selected yet could be
// through the local modules it calls (one without when_modified, planned on
// the pull request's base branch).
func modulesCanAdd(repo *repoconfig.Config, selected []repoconfig.Project, ch repoconfig.Change) bool {
	for _, p := range repo.Projects {
		if len(p.WhenModified) == 0 && p.OnBranch(ch.Base, ch.DefaultBranch) &&
			!slices.ContainsFunc(selected, func(s repoconfig.Project) bool { return s.Name == p.Name }) {
			return true
		}
	}
	return false
}

// moduleCalls reads the module graph of the checkout at root, each directory
// once. A module whose files do not parse counts as reading the whole
// repository: its project is planned, and terraform says what is wrong.
func moduleCalls(root string) repoconfig.ModuleCalls {
	cache := map[string][]string{}
	return func(dir string) []string {
		if calls, ok := cache[dir]; ok {
			return calls
		}
		m, err := tfconfig.Read(root, dir)
		calls := m.LocalCalls
		if err != nil {
			calls = []string{"."}
		}
		cache[dir] = calls
		return calls
	}
}
