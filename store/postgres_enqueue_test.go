package store

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"
)

// A batch aborted to break a deadlock (or a serialization conflict) stored
// nothing and is run again; any other error fails its enqueues.
func TestBatchConflictsAreRunAgain(t *testing.T) {
	require.True(t, isTxConflict(&pgconn.PgError{Code: "40P01", Message: "deadlock detected"}))
	require.True(t, isTxConflict(fmt.Errorf("send batch: %w", &pgconn.PgError{Code: "40001"})))
	require.False(t, isTxConflict(&pgconn.PgError{Code: "23505"}), "a unique violation is not a conflict to retry")
	require.False(t, isTxConflict(errors.New("connection refused")))
	require.False(t, isTxConflict(nil))
}
