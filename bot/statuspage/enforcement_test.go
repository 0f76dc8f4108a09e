package statuspage

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// The page says what the server enforces on terraform, and first what it
// does not.
func TestThePageSaysWhatIsEnforced(t *testing.T) {
	s := newScene(t, "bolt", Options{Enforcement: []string{
		"Direct connections are NOT stopped (<kernel>): terraform's processes can connect to any host and port",
		"Egress through the job's broker: the configured coordinators and terraform.egress",
	}})
	resp, body := get(t, s.srv.URL+"/", "")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, body, "What this server enforces on terraform")
	require.Contains(t, body, "<li>Direct connections are NOT stopped (&lt;kernel&gt;)")
	require.Contains(t, body, "<li>Egress through the job&#39;s broker")
}
