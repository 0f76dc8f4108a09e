package serverconfig

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/coord/coordbroker"
)

func TestParseConfigEgress(t *testing.T) {
	cfg, err := Parse("c", []byte(phaseConfig(t, "")), noEnv)
	require.NoError(t, err)
	require.Equal(t, coordbroker.DefaultEgress, cfg.Egress, "the registries by default")
	require.Contains(t, cfg.Egress, "registry.terraform.io:443")
	require.Contains(t, cfg.Egress, "registry.opentofu.org:443")

	cfg, err = Parse("c", []byte(phaseConfig(t, "terraform:\n  egress: [state.internal:443, \"*.s3.amazonaws.com:443\"]\n")), noEnv)
	require.NoError(t, err)
	require.Equal(t, []string{"state.internal:443", "*.s3.amazonaws.com:443"}, cfg.Egress)

	cfg, err = Parse("c", []byte(phaseConfig(t, "terraform:\n  egress: []\n")), noEnv)
	require.NoError(t, err)
	require.Empty(t, cfg.Egress, "only the coordinators")

	_, err = Parse("c", []byte(phaseConfig(t, "terraform:\n  egress: [registry.terraform.io, \"a.*.b:443\"]\n")), noEnv)
	require.ErrorContains(t, err, `terraform.egress[0] "registry.terraform.io" is not host:port or *.suffix:port`)
	require.ErrorContains(t, err, `terraform.egress[1] "a.*.b:443": a wildcard may only start the name`)
}

// A coordinator without credentials would accept the calls that go around
// the broker: refused unless insecure_no_auth says so.
func TestParseConfigCoordinatorWithoutCredentials(t *testing.T) {
	_, err := Parse("c", []byte(phaseConfig(t, "coordinators:\n  - url_prefix: http://coord:8080\n")), noEnv)
	require.ErrorContains(t, err, "coordinators[0] has no credentials: set username and password_file or password_env")
	require.ErrorContains(t, err, "insecure_no_auth: true")

	cfg, err := Parse("c", []byte(phaseConfig(t, "coordinators:\n  - url_prefix: http://coord:8080\n    insecure_no_auth: true\n")), noEnv)
	require.NoError(t, err)
	require.True(t, cfg.Coordinators[0].InsecureNoAuth)
}
