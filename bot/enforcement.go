package bot

import (
	"errors"
	"fmt"
	"strings"

	"github.com/sirupsen/logrus"

	"github.com/shardgate/shardgate/bot/server/serverconfig"
)

// directConnectStopped says whether sandboxed terraform can connect only to
// its job's broker (Landlock's port rules, ABI 4), and if not, why.
func directConnectStopped(cfg *serverconfig.Config, sandboxErr error) error {
	switch {
	case cfg.Sandbox == serverconfig.SandboxNone:
		return errors.New("terraform.sandbox: none")
	case sandboxErr != nil:
		return errors.New("terraform cannot be sandboxed here")
	}
	return sandboxConnectSupported()
}

// enforcement says in a few lines what this server enforces on terraform's
// network and the coordinators, for the startup log and the status page:
// what holds, and plainly what does not.
func enforcement(cfg *serverconfig.Config, sandboxErr error) (lines []string, warnings []string) {
	egress := "none"
	if len(cfg.Egress) > 0 {
		egress = strings.Join(cfg.Egress, ", ")
	}
	lines = append(lines, "Egress through the job's broker: the configured coordinators (mutations judged) and terraform.egress ("+egress+"); every other host, loopback and link-local address is refused with 403.")
	if err := directConnectStopped(cfg, sandboxErr); err != nil {
		warnings = append(warnings, fmt.Sprintf("Direct connections are NOT stopped (%v): terraform's processes can connect to any host and port without the broker, "+
			"including loopback and the cloud metadata address; the allow-list binds only what uses the proxy.", err))
	} else if len(cfg.SandboxConnectPorts) > 0 {
		lines = append(lines, fmt.Sprintf("Direct connections: Landlock lets terraform connect only to its broker's port and terraform.sandbox_connect_ports %v (any host on those ports).", cfg.SandboxConnectPorts))
	} else {
		lines = append(lines, "Direct connections: Landlock lets terraform connect only to its broker's port.")
	}
	for _, c := range cfg.Coordinators {
		if c.InsecureNoAuth {
			warnings = append(warnings, "Coordinator "+c.URLPrefix+" has no credentials (insecure_no_auth: true): it accepts calls that go around the broker, unjudged.")
		}
	}
	return lines, warnings
}

// logEnforcement writes enforcement's lines to the startup log.
func logEnforcement(log *logrus.Entry, cfg *serverconfig.Config, sandboxErr error) {
	lines, warnings := enforcement(cfg, sandboxErr)
	for _, l := range lines {
		log.Info("enforced: " + l)
	}
	for _, w := range warnings {
		log.Warn("not enforced: " + w)
	}
}

// errStatusReachable is why the status page is not served: no token nor sign-in, and
// terraform's processes can connect to its address around the broker.
var errStatusReachable = errors.New("the status page needs status.token_file or status.token_env here (or status.github_oauth): " +
	"direct connections from terraform are not stopped on this host, so pull-request code could read a page without a token")

// checkStatusReach refuses a status page without a token that pull-request
// code could reach: any address, when direct connections are not stopped
// (the broker refuses loopback and the host's own addresses otherwise).
func checkStatusReach(cfg *serverconfig.Config, sandboxErr error) error {
	if !cfg.Status.Enabled() || !cfg.Status.Token.Empty() || cfg.Status.OAuth != nil {
		return nil
	}
	if err := directConnectStopped(cfg, sandboxErr); err != nil {
		return fmt.Errorf("%w (%v)", errStatusReachable, err)
	}
	return nil
}
