package bot

import (
	"fmt"
	"os"

	"github.com/sirupsen/logrus"

	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/bot/statuspage"
	"github.com/shardgate/shardgate/terraform/runner"
)

// sandboxSupported is runner.SandboxSupported and landlockABI
// runner.LandlockABI; tests stand in a kernel without Landlock.
var (
	sandboxSupported = runner.SandboxSupported
	landlockABI      = runner.LandlockABI
)

// logSandbox says at start-up which sandbox terraform runs in: Landlock and
// its ABI version, or none and why (refusal from sandboxRunnerOptions); and
// how the processes a sandboxed command leaves are ended (procs, the
// runner's), or a warning that they are not.
func logSandbox(log *logrus.Entry, cfg *serverconfig.Config, refusal error, procs runner.Containment) {
	switch {
	case cfg.Sandbox == serverconfig.SandboxNone:
		log.WithField("sandbox", "none").Warn("sandbox: none (terraform.sandbox: none): terraform runs unconfined, and every comment says so")
	case refusal != nil:
		log.WithField("sandbox", "none").WithError(refusal).Error("sandbox: none: terraform cannot be sandboxed here: " +
			"pull requests will not be planned nor merges applied (terraform.sandbox: none would run them unsandboxed)")
	default:
		abi := landlockABI()
		log.WithFields(logrus.Fields{"sandbox": "landlock", "landlock_abi": abi}).Infof("sandbox: Landlock ABI %d confines every terraform run", abi)
		procLog := log.WithField("process_containment", procs.Mechanism)
		if procs.Enforced() {
			procLog.Info("sandbox: processes: " + procs.String())
		} else {
			procLog.Warn("sandbox: processes: NOT ENFORCED: " + procs.String())
		}
		if shared := cfg.SharedWritable(); len(shared) > 0 {
			log.WithField("sandbox_writable", shared).Warn("sandbox: terraform.sandbox_writable entries without {owner}, {repo} or {project} are shared: " +
				"any pull request's code may write and lock every state file in them, other projects' included")
		}
	}
}

// containmentSetting is the status page's line on how the processes of a
// job's terraform commands are ended.
func containmentSetting(procs runner.Containment) statuspage.Setting {
	return statuspage.Setting{Name: "processes of a job", Value: procs.String(), Warn: !procs.Enforced()}
}

// sandboxConnectSupported is runner.SandboxConnectSupported, likewise.
var sandboxConnectSupported = runner.SandboxConnectSupported

// sandboxRunnerOptions are the runner options of cfg.Sandbox. refusal is set
// when the configuration asks for the sandbox (the default) and this host
// cannot provide it: then no pull request is planned and no apply runs,
// rather than running their code unconfined.
func sandboxRunnerOptions(cfg *serverconfig.Config) (opts []runner.Option, refusal error) {
	if cfg.Sandbox == serverconfig.SandboxNone {
		return nil, nil
	}
	if err := sandboxSupported(); err != nil {
		return nil, err
	}
	// Ports limited on a kernel that cannot: refused, never silently open.
	if len(cfg.SandboxConnectPorts) > 0 {
		if err := sandboxConnectSupported(); err != nil {
			return nil, err
		}
	}
	// The launcher is this binary: shardgate's main hands over to it first.
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find the shardgate binary to confine terraform: %w", err)
	}
	return []runner.Option{runner.WithSandbox(runner.Sandbox{Launcher: self, ReadWrite: cfg.SharedWritable(),
		ConnectPorts: cfg.SandboxConnectPorts})}, nil
}
