// Package bot is shardgate's GitHub App: the Server (wiring, the event
// handlers, restart clean-up) and the Applier (merge → pre-flight, guard,
// terraform, convergence); the Planner (pull request → plans → comment and
// checks) is the package plan. Each job they orchestrate lives in a package
// of its own: prcommand (the command language), approval (approvers,
// exception labels), repopolicy (the repository's policy), livestate (the
// coordinators' live state), prreport (the comment and check runs),
// traceability (who asked, in the coordinator's audit), listener and workdir
// (what the server serves on and works in).
package bot
