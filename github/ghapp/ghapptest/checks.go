package ghapptest

import (
	"context"
	"fmt"

	"github.com/shardgate/shardgate/github/ghapp"
)

// CheckRun is a check run as the fake keeps it.
type CheckRun struct {
	ghapp.CheckRunUpdate
	ID    int64
	Owner string
	Repo  string
}

// CheckRuns are the check runs made, in order of creation.
func (g *GitHub) CheckRuns() []CheckRun {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]CheckRun(nil), g.checks...)
}

// CreateCheckRun implements ghapp.Checks.
func (g *GitHub) CreateCheckRun(_ context.Context, owner, repo string, run ghapp.CheckRunUpdate) (int64, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.call("CreateCheckRun"); err != nil {
		return 0, err
	}
	cr := CheckRun{CheckRunUpdate: run, ID: g.id(), Owner: owner, Repo: repo}
	g.checks = append(g.checks, cr)
	return cr.ID, nil
}

// UpdateCheckRun implements ghapp.Checks.
func (g *GitHub) UpdateCheckRun(_ context.Context, owner, repo string, id int64, run ghapp.CheckRunUpdate) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.call("UpdateCheckRun"); err != nil {
		return err
	}
	for i := range g.checks {
		if c := &g.checks[i]; c.ID == id && c.Owner == owner && c.Repo == repo {
			run.HeadSHA = c.HeadSHA // not changed by an update
			c.CheckRunUpdate = run
			return nil
		}
	}
	return notFound(fmt.Sprintf("check run %d", id))
}

// ListCheckRuns implements ghapp.Checks (every run here is the App's).
func (g *GitHub) ListCheckRuns(_ context.Context, owner, repo, sha, name string, _ int64, page int) (ghapp.Page[ghapp.CheckRun], error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.call("ListCheckRuns"); err != nil {
		return ghapp.Page[ghapp.CheckRun]{}, err
	}
	var runs []ghapp.CheckRun
	for _, c := range g.checks {
		if c.Owner == owner && c.Repo == repo && c.HeadSHA == sha && c.Name == name {
			runs = append(runs, ghapp.CheckRun{ID: c.ID, ExternalID: c.ExternalID, Status: c.Status})
		}
	}
	return paged(runs, page, g.PerPage), nil
}
