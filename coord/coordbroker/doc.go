// Package coordbroker is the per-job coordinator broker: an HTTP(S) proxy set
// in terraform's environment through which every coordinator request of the
// job's processes passes. Terraform never holds a coordinator credential; the
// broker adds the real one to the calls the review judged (the group create
// and the stream scale at the judged count, a delete the policy waived, any
// read) and refuses every other mutation with 403. Requests to configured
// coordinators over https are terminated with a leaf certificate of a per-job
// CA that only the sandbox trusts (its key never leaves this process); every
// other host is tunnelled or forwarded untouched. A call that goes around the
// broker reaches the coordinator without credentials and gets 401.
package coordbroker
