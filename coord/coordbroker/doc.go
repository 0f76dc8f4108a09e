// Package coordbroker is the per-job coordinator broker: an HTTP(S) proxy set
// in terraform's environment through which every coordinator request of the
// job's processes passes. Terraform never holds a coordinator credential; the
// broker adds the real one to the calls the review judged (the group create
// and the stream scale at the judged count, a delete the policy waived, any
// read) and refuses every other mutation with 403. Requests to configured
// coordinators over https are terminated with a leaf certificate of a per-job
// CA that only the sandbox trusts (its key never leaves this process). A
// configured coordinator is known by its address too, under any name. The
// hosts of the egress list (Config.Egress) are tunnelled or forwarded
// untouched; every other host gets 403. A mutation that passes carries a
// body the broker builds from the judged change, never the caller's bytes.
// A call that goes around the broker reaches the coordinator without
// credentials and gets 401.
package coordbroker
