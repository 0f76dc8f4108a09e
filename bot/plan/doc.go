// Package plan is shardgate's plan flow, the Planner: it loads a pull
// request, checks out its head (Checkouts), plans each affected project with
// terraform, judges the plans by the repository's policy with the
// coordinators' live state, the pull request's labels and attestations, and
// keeps the pull request's comment and check runs up to date, the Apply
// section of the comment included. The event handlers of package bot start
// it; the applies reach it for a checkout and the comment.
package plan
