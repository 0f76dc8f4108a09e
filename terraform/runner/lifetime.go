package runner

import (
	"errors"
	"fmt"
)

// A pull request's code may start processes that leave terraform behind: a
// provisioner's `setsid nohup daemon &`, a double fork. Inside the sandbox
// they would keep its rights (the shared sandbox_writable directories, the
// network) after the job, at any later time. So each command of a sandboxed
// job's terraform runs in a cgroup of its own (cgroup v2), and when it ends
// every process left in it is killed (cgroup.kill) before the command
// returns; the server's own process is never in it. Where this process may
// make no cgroup, terraform is started as the init of a PID namespace of its
// own: when it exits, the kernel kills every process left in the namespace.
// Where neither is possible nothing ends them: ProcessContainment says so,
// and the server warns at start-up and on its status page.

// Mechanisms of Containment.
const (
	// ContainCgroup: a cgroup v2 per command, killed whole when it ends.
	ContainCgroup = "cgroup"
	// ContainPIDNamespace: terraform is the init of a PID namespace of its
	// own; the kernel kills the rest of it when terraform exits.
	ContainPIDNamespace = "pid-namespace"
	// ContainNone: processes a command leaves behind are not ended.
	ContainNone = "none"
)

// Containment says how the processes of a sandboxed job's terraform command
// are ended when the command ends.
type Containment struct {
	// Mechanism is ContainCgroup, ContainPIDNamespace or ContainNone.
	Mechanism string
	// Parent is the cgroup directory jobs' cgroups are made in (ContainCgroup).
	Parent string
	// Reason says why there is no cgroup (ContainPIDNamespace) or why
	// nothing ends them (ContainNone).
	Reason string
}

// Enforced says whether a command's leftover processes are ended.
func (c Containment) Enforced() bool { return c.Mechanism != ContainNone }

// String describes the containment in a sentence fit for a log or the
// status page.
func (c Containment) String() string {
	switch c.Mechanism {
	case ContainCgroup:
		return fmt.Sprintf("a cgroup v2 per job under %s: every process a terraform command started is killed when it ends (cgroup.kill)", c.Parent)
	case ContainPIDNamespace:
		return "a PID namespace per terraform command, terraform its init: every process it started is killed when it exits (no cgroup: " + c.Reason + ")"
	}
	return "none: processes a terraform command starts (setsid, nohup, double fork) may outlive their job: " + c.Reason
}

// Containment is how this runner ends the processes of its sandboxed jobs'
// commands; unsandboxed jobs are not contained.
func (r *Runner) Containment() Containment {
	if r.sandbox == nil {
		return Containment{Mechanism: ContainNone, Reason: "terraform is not sandboxed"}
	}
	return r.containment
}

// contained runs one command of the job (run) in a cgroup of its own, when
// the job is sandboxed and this host can: then every process the command
// started is killed and the cgroup removed before it returns, whatever its
// outcome. A fresh cgroup per command: a process cloned into a cgroup that
// was killed before is killed at birth by some kernels (6.x's kill_seq is
// read from the parent's cgroup, not the target's).
func (j *Job) contained(command func() error) error {
	if j.confine == nil || j.r.containment.Mechanism != ContainCgroup {
		return command() // a PID namespace ends with terraform (SandboxPolicy.PIDNamespace)
	}
	cg, err := newJobCgroup(j.r.containment.Parent)
	if err != nil {
		return fmt.Errorf("make the command's cgroup: %w", err)
	}
	j.procs, j.confine.Cgroup = cg, cg.dir
	defer func() { j.procs, j.confine.Cgroup = nil, "" }()
	if err := j.encodePolicy(); err != nil {
		return errors.Join(err, cg.remove())
	}
	err = command()
	// Whatever the command left running (a provisioner's daemon) dies now.
	if rmErr := cg.remove(); rmErr != nil {
		err = errors.Join(err, rmErr)
	}
	return err
}
