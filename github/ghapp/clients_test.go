package ghapp

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"testing"

	"github.com/stretchr/testify/require"
)

func appKey(t *testing.T) []byte {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
}

// One client per installation, reused; at most MaxInstallationClients kept,
// the least recently used dropped first and made again when needed.
func TestClientCreatorKeepsABoundedNumberOfClients(t *testing.T) {
	c, err := NewClientCreator("https://api.github.test/", 7, appKey(t), nil)
	require.NoError(t, err)
	first, err := c.NewInstallationClient(1)
	require.NoError(t, err)
	again, err := c.NewInstallationClient(1)
	require.NoError(t, err)
	require.Same(t, first, again, "the installation's client (and its token) is reused")

	for id := int64(2); id <= MaxInstallationClients+100; id++ {
		_, err := c.InstallationHTTPClient(id)
		require.NoError(t, err)
	}
	require.Equal(t, MaxInstallationClients, c.clients.Len(), "every installation ever seen would stay otherwise")
	remade, err := c.NewInstallationClient(1)
	require.NoError(t, err)
	require.NotSame(t, first, remade, "the least recently used went first, and is made again")

	c.Forget(1)
	_, ok := c.clients.Peek(1)
	require.False(t, ok, "an uninstalled App's client is dropped")
	_, err = c.NewInstallationClient(0)
	require.Error(t, err, "an event without an installation gets no client")
}
