package bot

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/bot/server/serverconfig"
)

// withConnectABI stands in a kernel with or without Landlock's port rules.
func withConnectABI(t *testing.T, err error) {
	old := sandboxConnectSupported
	t.Cleanup(func() { sandboxConnectSupported = old })
	sandboxConnectSupported = func() error { return err }
}

// On a kernel without Landlock's port rules (or without the sandbox), PR
// code can connect to any address: the status page is not served without a
// token, and the startup log and the page say direct connections are not
// stopped. Coordinators with insecure_no_auth are named.
func TestEnforcementWhereDirectConnectionsAreOpen(t *testing.T) {
	cfg := &serverconfig.Config{Status: serverconfig.StatusConfig{Listen: "127.0.0.1:0"}, Egress: []string{"registry.terraform.io:443"},
		Coordinators: []serverconfig.CoordinatorCredentials{{URLPrefix: "http://coord:8080", InsecureNoAuth: true}}}

	withConnectABI(t, errors.New("this kernel offers 3"))
	err := checkStatusReach(cfg, nil)
	require.ErrorIs(t, err, errStatusReachable)
	require.ErrorContains(t, err, "status.token_file or status.token_env")
	require.ErrorContains(t, err, "this kernel offers 3")
	lines, warnings := enforcement(cfg, nil)
	require.Len(t, warnings, 2)
	require.Contains(t, warnings[0], "Direct connections are NOT stopped (this kernel offers 3)")
	require.Contains(t, warnings[1], "Coordinator http://coord:8080 has no credentials (insecure_no_auth: true)")
	require.Contains(t, lines[0], "terraform.egress (registry.terraform.io:443)")

	withToken := *cfg
	withToken.Status.Token = serverconfig.NewSecret("a-status-token-of-some-length")
	require.NoError(t, checkStatusReach(&withToken, nil))
	withSignIn := *cfg
	withSignIn.Status.OAuth = &serverconfig.GitHubOAuth{ClientID: "Iv1.abc", ClientSecret: serverconfig.NewSecret("a-client-secret-of-some-length")}
	require.NoError(t, checkStatusReach(&withSignIn, nil), "sign-in with GitHub guards the page as a token does")

	unsandboxed := *cfg
	unsandboxed.Sandbox = serverconfig.SandboxNone
	withConnectABI(t, nil)
	require.ErrorIs(t, checkStatusReach(&unsandboxed, nil), errStatusReachable, "terraform.sandbox: none stops nothing")

	require.NoError(t, checkStatusReach(cfg, nil), "Landlock's port rules keep PR code from the page")
	lines, warnings = enforcement(cfg, nil)
	require.Len(t, warnings, 1)
	require.Contains(t, lines, "Direct connections: Landlock lets terraform connect only to its broker's port.")
}
