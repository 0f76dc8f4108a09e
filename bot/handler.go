// Package bot is shardgate's GitHub App: the Server (wiring, the event
// handlers, restart clean-up). The flows the handlers start are packages of
// their own: plan (the Planner: pull request → plans → comment and checks)
// and apply (the Applier: merge → pre-flight, guard, terraform,
// convergence). Each job they orchestrate lives in a package of its own too:
// prcommand (the command language), approval (approvers, exception labels),
// repopolicy (the repository's policy), livestate (the coordinators' live
// state), prreport (the comment and check runs), traceability (who asked, in
// the coordinator's audit), listener and workdir (what the server serves on
// and works in).
package bot
