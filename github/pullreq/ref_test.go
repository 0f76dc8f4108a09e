package pullreq

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRef(t *testing.T) {
	r := Ref{Installation: 7, Owner: "acme", Repo: "infra", Number: 42}
	require.Equal(t, "acme/infra", r.FullName())
	require.Equal(t, "acme/infra#42", r.String())
	require.Equal(t, "acme/infra#00000042", r.Key())
}

// Key orders a repository's pull requests by number, as the store lists keys.
func TestRefKeyOrdersByNumber(t *testing.T) {
	var keys []string
	for _, n := range []int{100, 9, 10, 2} {
		keys = append(keys, Ref{Owner: "acme", Repo: "infra", Number: n}.Key())
	}
	slices.Sort(keys)
	require.Equal(t, []string{"acme/infra#00000002", "acme/infra#00000009", "acme/infra#00000010", "acme/infra#00000100"}, keys)
}
