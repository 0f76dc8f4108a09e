package ghapp

import (
	"sort"
)

// GitHubCall is one GitHub API call shardgate makes, with the App permission it
// needs. The table is the source of the App manifest's permissions; a test holds
// it against the calls the code makes (the fake GitHub's request log).
type GitHubCall struct {
	Method, Path string
	Permission   string // GitHub App permission name, e.g. "checks"
	Access       string // "read" or "write"
	Why          string
}

// GitHubCalls lists every GitHub API call shardgate makes.
var GitHubCalls = []GitHubCall{
	{"GET", "/repos/{owner}/{repo}/contents/{path}", "contents", "read", ".shardgate.yaml from the base branch"},
	{"GET", "/repos/{owner}/{repo}/tarball/{ref}", "contents", "read", "the pull request head and merge commit to plan"},
	{"GET", "/repos/{owner}/{repo}/pulls/{pull_number}", "pull_requests", "read", "the pull request's head, base and author"},
	{"GET", "/repos/{owner}/{repo}/pulls/{pull_number}/files", "pull_requests", "read", "which projects a pull request changes"},
	{"GET", "/repos/{owner}/{repo}/issues/{issue_number}/labels", "pull_requests", "read", "exception labels"},
	{"DELETE", "/repos/{owner}/{repo}/issues/{issue_number}/labels/{name}", "pull_requests", "write", "a push voids exception labels"},
	{"GET", "/repos/{owner}/{repo}/issues/{issue_number}/events", "issues", "read", "who added a label, and when"},
	{"GET", "/repos/{owner}/{repo}/issues/{issue_number}/comments", "issues", "read", "find shardgate's comment before creating one"},
	{"POST", "/repos/{owner}/{repo}/issues/{issue_number}/comments", "issues", "write", "the one shardgate comment"},
	{"GET", "/repos/{owner}/{repo}/issues/comments/{comment_id}", "issues", "read", "read a /shardgate command back: its author, body and times"},
	{"PATCH", "/repos/{owner}/{repo}/issues/comments/{comment_id}", "issues", "write", "edit the comment in place"},
	{"POST", "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions", "issues", "write", "acknowledge a /shardgate command"},
	{"GET", "/repos/{owner}/{repo}/collaborators/{username}/permission", "metadata", "read", "who may run /shardgate commands"},
	{"POST", "/repos/{owner}/{repo}/check-runs", "checks", "write", "shardgate/plan and shardgate/apply check runs"},
	{"PATCH", "/repos/{owner}/{repo}/check-runs/{check_run_id}", "checks", "write", "finish a check run"},
	{"GET", "/orgs/{org}/teams/{team_slug}/memberships/{username}", "members", "read", "approver teams"},
	{"GET", "/repos/{owner}/{repo}/compare/{basehead}", "contents", "read", "the default branch's head commit a drift check plans; what a merge group changes, and its commits"},
	{"GET", "/repos/{owner}/{repo}/issues", "issues", "read", "find a project's drift issue (label shardgate/drift) before opening one"},
	{"POST", "/repos/{owner}/{repo}/issues", "issues", "write", "open a drift issue"},
	{"GET", "/repos/{owner}/{repo}/issues/{issue_number}", "issues", "read", "read the drift issue shardgate remembers"},
	{"PATCH", "/repos/{owner}/{repo}/issues/{issue_number}", "issues", "write", "edit a drift issue in place, close it when the drift is gone"},
	{"GET", "/repos/{owner}/{repo}/commits/{commit_sha}/pulls", "pull_requests", "read", "the pull requests in a merge group"},
}

// eventPermissions are the permissions a subscription needs beyond those of
// the calls: GitHub sends merge_group only to an App that may read merge queues.
var eventPermissions = map[string]GitHubCall{
	"merge_group": {Permission: "merge_queues", Access: "read", Why: "merge_group events of the merge queue"},
}

// Manifest is a GitHub App manifest (the manifest flow of "Register a GitHub App
// from a manifest").
type Manifest struct {
	Name               string            `json:"name"`
	URL                string            `json:"url"`
	HookAttributes     ManifestHook      `json:"hook_attributes"`
	RedirectURL        string            `json:"redirect_url,omitempty"`
	Public             bool              `json:"public"`
	DefaultPermissions map[string]string `json:"default_permissions"`
	DefaultEvents      []string          `json:"default_events"`
}

// ManifestHook is the manifest's webhook.
type ManifestHook struct {
	URL    string `json:"url"`
	Active bool   `json:"active"`
}

// manifestEvents maps the webhook event names the handlers take to the names a
// manifest subscribes to. Installation events are sent to every App and cannot
// be subscribed to, so they have none.
var manifestEvents = map[string]string{
	"pull_request":              "pull_request",
	"issue_comment":             "issue_comment",
	"check_run":                 "check_run",
	"membership":                "membership",
	"team":                      "team",
	"merge_group":               "merge_group",
	"installation":              "",
	"installation_repositories": "",
}

// NewManifest builds the App manifest for a service reachable at baseURL: the
// webhook events it handles (as its handlers name them) and the least
// permissions the GitHub calls need.
func NewManifest(name, baseURL string, handled []string) Manifest {
	perms := map[string]string{}
	for _, c := range GitHubCalls {
		if perms[c.Permission] != "write" {
			perms[c.Permission] = c.Access
		}
	}
	seen := map[string]bool{}
	var events []string
	for _, e := range handled {
		if m, ok := manifestEvents[e]; ok && m != "" && !seen[m] {
			seen[m] = true
			events = append(events, m)
			if p, ok := eventPermissions[m]; ok && perms[p.Permission] != "write" {
				perms[p.Permission] = p.Access
			}
		}
	}
	sort.Strings(events)
	return Manifest{
		Name:               name,
		URL:                baseURL,
		HookAttributes:     ManifestHook{URL: baseURL + "/webhook", Active: true},
		DefaultPermissions: perms,
		DefaultEvents:      events,
	}
}

// ManifestEventKnown reports whether the manifest knows a handled event.
func ManifestEventKnown(event string) bool {
	_, ok := manifestEvents[event]
	return ok
}
