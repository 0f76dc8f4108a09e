package plan

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/logctx"
)

// Checkouts fetch a commit's tree into a fresh directory of the run dir: the
// pull request's head for its plans, the merge commit for its applies, the
// default branch for the drift checks, the base commit for its policy.
type Checkouts struct {
	Clients ghapp.ClientCreator
	// APIURL is GitHub's API (github.api_url).
	APIURL string
	// Dir is where checkouts go: this process's run directory.
	Dir string
	Now func() time.Time
}

// Checkout fetches the tree of sha into a fresh directory; cleanup removes it.
// The symlinks it leaves out fail a plan that needs them (Tree), and
// change any other plan that would, so a replan or drift check needs no list.
func (c *Checkouts) Checkout(ctx context.Context, ref pullreq.Ref, sha string) (string, func(), error) {
	dir, _, cleanup, err := c.Tree(ctx, ref, sha)
	return dir, cleanup, err
}

// Tree is Checkout saying which of the tree's symlinks were not made.
func (c *Checkouts) Tree(ctx context.Context, ref pullreq.Ref, sha string) (string, []ghapp.SkippedLink, func(), error) {
	hc, err := c.Clients.InstallationHTTPClient(ref.Installation)
	if err != nil {
		return "", nil, func() {}, err
	}
	dir, err := os.MkdirTemp(c.Dir, "checkout-")
	if err != nil {
		return "", nil, func() {}, fmt.Errorf("make checkout dir: %w", err)
	}
	cleanup := func() {
		// Left behind, it goes with the run dir at Close or the next start.
		if err := os.RemoveAll(dir); err != nil {
			logctx.Logger(ctx).WithError(err).Warn("remove a checkout")
		}
	}
	skipped, err := ghapp.DownloadTarball(ctx, hc, c.APIURL, ref.Owner, ref.Repo, sha, dir, c.Now)
	if err != nil {
		return "", nil, cleanup, err
	}
	return dir, skipped, cleanup, nil
}

// Checkout is the Checkouts' Checkout: what an apply re-plans.
func (s *Planner) Checkout(ctx context.Context, ref pullreq.Ref, sha string) (string, func(), error) {
	return s.Checkouts.Checkout(ctx, ref, sha)
}

// headTree is a commit's checkout fetched on first use and then kept: the
// module graph that selects the projects and their plans read one checkout.
type headTree struct {
	fetch   func() (string, []ghapp.SkippedLink, func(), error)
	fetched bool
	dir     string
	skipped []ghapp.SkippedLink
	err     error
	cleanup func()
}

// get fetches the tree the first time: its directory, the symlinks left out.
func (t *headTree) get() (string, []ghapp.SkippedLink, error) {
	if !t.fetched {
		t.fetched = true
		t.dir, t.skipped, t.cleanup, t.err = t.fetch()
	}
	return t.dir, t.skipped, t.err
}

// root is the checkout's directory, "" when it could not be fetched (what
// selectProjects asks for).
func (t *headTree) root() string {
	dir, _, err := t.get()
	if err != nil {
		return ""
	}
	return dir
}

// remove removes the checkout, if one was made.
func (t *headTree) remove() {
	if t.cleanup != nil {
		t.cleanup()
	}
}
