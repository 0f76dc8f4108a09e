package serverconfig

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestValidListen(t *testing.T) {
	for _, ok := range []string{":8080", "127.0.0.1:0", "[::1]:65535"} {
		require.NoError(t, validListen(ok), ok)
	}
	for _, bad := range []string{"127.0.0.1:99999", "localhost", "127.0.0.1:http", ":-1"} {
		require.Error(t, validListen(bad), bad)
	}
}
