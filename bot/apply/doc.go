// Package apply is shardgate's apply flow, the Applier: it turns a merge into
// apply jobs (one per project whose reviewed plan changes anything, in merge
// order, but for the projects applied by hand), and runs each job the apply
// queue's scheduler hands it: pre-flight (the coordinator, the
// attestations), the re-plan of the merge commit behind the coordinator
// broker, the end-state guard against the reviewed plan, the policy on the
// merge commit, terraform apply, convergence, and its report (check run,
// audit record, the pull request's comment through the planning side). The
// event handlers of package bot queue the applies; the Server wires it.
package apply
