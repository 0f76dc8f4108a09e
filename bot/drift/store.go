package drift

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/shardgate/shardgate/bot/server/metrics"
	"github.com/shardgate/shardgate/planparse"
	"github.com/shardgate/shardgate/store"
	"github.com/shardgate/shardgate/store/records"
)

// Store buckets.
const (
	bucketResults = "drift"
	bucketRepos   = "drift_repos"
)

// Repo is a repository shardgate has seen (a pull-request or comment event
// named it) and so checks for drift.
type Repo struct {
	Installation  int64  `json:"installation"`
	Owner         string `json:"owner"`
	Name          string `json:"name"`
	DefaultBranch string `json:"default_branch"`
	// NextCheck is when the scheduled check of the repository is due; a
	// replica that claims it moves it on first (Store.ClaimDue).
	NextCheck time.Time `json:"next_check,omitempty"`
	// LastError is why the last check of the repository failed as a whole
	// (GitHub, its configuration, the store), redacted; "" once one succeeds.
	// FailedAt is when.
	LastError string    `json:"last_error,omitempty"`
	FailedAt  time.Time `json:"failed_at,omitempty"`
}

// FullName is "owner/name".
func (r Repo) FullName() string { return r.Owner + "/" + r.Name }

// Record is what the Store keeps of a project's last drift check, and what
// List returns (the status page shows it).
type Record struct {
	// Repo is "owner/name"; Project is the project's name.
	Repo    string `json:"repo"`
	Project string `json:"project"`
	// Branch and Commit are what was planned.
	Branch    string    `json:"branch"`
	Commit    string    `json:"commit"`
	CheckedAt time.Time `json:"checked_at"`
	// Status is clean, drifted or error.
	Status Status `json:"status"`
	// Groups are the groups whose live count differs (each with its Since).
	Groups []Group `json:"groups"`
	// Pending counts the changes Terraform would make there.
	Pending int `json:"pending"`
	// Since is when the current drift was first seen: the oldest group's
	// Since, else the first drifted check in a row; zero when clean.
	Since time.Time `json:"since,omitempty"`
	// Issue is the number of the project's drift issue; 0 when none was opened.
	Issue int `json:"issue,omitempty"`
	// Error is why the last check could not tell (Status error).
	Error string `json:"error,omitempty"`
	// Desired are the shard counts the last check that planned found the
	// project asking (kept through a failed check).
	Desired []planparse.Desired `json:"desired,omitempty"`
}

// Store keeps drift records over the service's store (bbolt or PostgreSQL).
type Store struct{ st store.Store }

// NewStore keeps drift records in st.
func NewStore(st store.Store) Store { return Store{st: st} }

func resultKey(repo, project string) string { return repo + "\x00" + project }

// Get is the record of a project; nil when it was never checked.
func (s Store) Get(ctx context.Context, repo, project string) (*Record, error) {
	return records.GetJSON[Record](ctx, s.st, bucketResults, resultKey(repo, project))
}

// Put stores the record of a project.
func (s Store) Put(ctx context.Context, r *Record) error {
	return records.PutJSON(ctx, s.st, bucketResults, resultKey(r.Repo, r.Project), r)
}

// List returns the last drift check of every project checked, by repository
// and project.
func (s Store) List(ctx context.Context) ([]Record, error) {
	kvs, err := s.st.List(ctx, bucketResults, "")
	if err != nil {
		return nil, fmt.Errorf("list drift records: %w", err)
	}
	out := make([]Record, 0, len(kvs))
	for _, kv := range kvs {
		var r Record
		if err := json.Unmarshal(kv.Value, &r); err != nil {
			return nil, fmt.Errorf("decode drift record %q: %w", kv.Key, err)
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Repo != out[j].Repo {
			return out[i].Repo < out[j].Repo
		}
		return out[i].Project < out[j].Project
	})
	return out, nil
}

func repoKey(owner, name string) string { return owner + "/" + name }

// SawRepo records a repository an event named (its installation and default
// branch may change); the schedule of a known one is kept. It writes only
// when something changed.
func (s Store) SawRepo(ctx context.Context, r Repo) error {
	if r.Owner == "" || r.Name == "" || r.Installation == 0 {
		return nil
	}
	old, err := s.Repo(ctx, r.Owner, r.Name)
	if err != nil {
		return err
	}
	if old != nil && old.Installation == r.Installation && old.DefaultBranch == r.DefaultBranch {
		return nil
	}
	return s.st.Update(ctx, bucketRepos, repoKey(r.Owner, r.Name), func(b []byte) ([]byte, error) {
		var cur Repo
		if b != nil {
			if err := json.Unmarshal(b, &cur); err != nil {
				return nil, fmt.Errorf("decode drift repo: %w", err)
			}
		}
		r.NextCheck, r.LastError, r.FailedAt = cur.NextCheck, cur.LastError, cur.FailedAt
		return json.Marshal(r)
	})
}

// Repo is a known repository; nil when none.
func (s Store) Repo(ctx context.Context, owner, name string) (*Repo, error) {
	return records.GetJSON[Repo](ctx, s.st, bucketRepos, repoKey(owner, name))
}

// Repos are the known repositories, by name.
func (s Store) Repos(ctx context.Context) ([]Repo, error) {
	kvs, err := s.st.List(ctx, bucketRepos, "")
	if err != nil {
		return nil, fmt.Errorf("list drift repos: %w", err)
	}
	out := make([]Repo, 0, len(kvs))
	for _, kv := range kvs {
		var r Repo
		if err := json.Unmarshal(kv.Value, &r); err != nil {
			return nil, fmt.Errorf("decode drift repo %q: %w", kv.Key, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// ClaimDue moves the repository's next check to next when it is due at now
// (its NextCheck zero or passed), atomically: of replicas sharing the store,
// one claims each check. It says whether this caller claimed it.
func (s Store) ClaimDue(ctx context.Context, owner, name string, now, next time.Time) (bool, error) {
	claimed := false
	err := s.st.Update(ctx, bucketRepos, repoKey(owner, name), func(b []byte) ([]byte, error) {
		claimed = false
		if b == nil {
			return nil, nil
		}
		var r Repo
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("decode drift repo: %w", err)
		}
		if !r.NextCheck.IsZero() && r.NextCheck.After(now) {
			return b, nil
		}
		claimed, r.NextCheck = true, next.UTC()
		return json.Marshal(r)
	})
	return claimed, err
}

// RepoChecked records how the last check of a known repository ended: msg
// is why it failed as a whole, "" when it did not. It writes only when that
// changes.
func (s Store) RepoChecked(ctx context.Context, owner, name, msg string, at time.Time) error {
	return s.st.Update(ctx, bucketRepos, repoKey(owner, name), func(b []byte) ([]byte, error) {
		if b == nil {
			return nil, nil
		}
		var r Repo
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("decode drift repo: %w", err)
		}
		if r.LastError == "" && msg == "" {
			return b, nil
		}
		r.LastError, r.FailedAt = msg, at.UTC()
		if msg == "" {
			r.FailedAt = time.Time{}
		}
		return json.Marshal(r)
	})
}

// record turns a result into the record kept, carrying Since over from the
// previous record of the project for every group still drifted.
func record(res Result, prev *Record, issue int) *Record {
	rec := &Record{Repo: res.Repo, Project: res.Project, Branch: res.Branch, Commit: res.Commit, CheckedAt: res.CheckedAt,
		Status: res.Status, Groups: []Group{}, Pending: len(res.Pending), Issue: issue, Error: res.Error, Desired: res.Desired}
	seen := map[string]time.Time{}
	if prev != nil {
		for _, g := range prev.Groups {
			seen[g.Key()] = g.Since
		}
	}
	for _, g := range res.Groups {
		if since, ok := seen[g.Key()]; ok && !since.IsZero() {
			g.Since = since
		} else {
			g.Since = res.CheckedAt
		}
		rec.Groups = append(rec.Groups, g)
		if rec.Since.IsZero() || g.Since.Before(rec.Since) {
			rec.Since = g.Since
		}
	}
	switch {
	case res.Status == StatusError && prev != nil:
		// A failed check tells nothing about the drift: keep what was known.
		rec.Groups, rec.Since, rec.Pending, rec.Desired = prev.Groups, prev.Since, prev.Pending, prev.Desired
	case res.Status == StatusDrifted && rec.Since.IsZero():
		rec.Since = res.CheckedAt
		if prev != nil && prev.Status == StatusDrifted && !prev.Since.IsZero() {
			rec.Since = prev.Since
		}
	}
	return rec
}

// ForgetRepo stops checking a repository (the App was removed from it) and
// drops its projects' records.
func (s Store) ForgetRepo(ctx context.Context, owner, name string) error {
	if err := s.st.Delete(ctx, bucketRepos, repoKey(owner, name)); err != nil {
		return fmt.Errorf("forget drift repo %s/%s: %w", owner, name, err)
	}
	kvs, err := s.st.List(ctx, bucketResults, resultKey(repoKey(owner, name), ""))
	if err != nil {
		return fmt.Errorf("list drift records of %s/%s: %w", owner, name, err)
	}
	for _, kv := range kvs {
		if err := s.st.Delete(ctx, bucketResults, kv.Key); err != nil {
			return fmt.Errorf("forget drift record: %w", err)
		}
	}
	return nil
}

// ForgetInstallation forgets every repository of an installation (the App
// was uninstalled or suspended).
func (s Store) ForgetInstallation(ctx context.Context, installation int64) error {
	repos, err := s.Repos(ctx)
	if err != nil {
		return err
	}
	for _, r := range repos {
		if r.Installation == installation {
			if err := s.ForgetRepo(ctx, r.Owner, r.Name); err != nil {
				return err
			}
		}
	}
	return nil
}

// MetricProjects are the records as the drift metrics read them.
func (s Store) MetricProjects(ctx context.Context) ([]metrics.DriftProject, error) {
	recs, err := s.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]metrics.DriftProject, 0, len(recs))
	for _, r := range recs {
		out = append(out, metrics.DriftProject{Repo: r.Repo, Project: r.Project, Status: string(r.Status), Groups: len(r.Groups), CheckedAt: r.CheckedAt})
	}
	return out, nil
}
