package store

import (
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Heartbeat checks that the job is still running for owner (see Store). One
// process holds the file, so a claim cannot expire while it runs and there is
// no lease to renew; the check still tells a worker whose job was handed back
// (RecoverRunning, Release) that it lost it.
func (b *Bolt) Heartbeat(ctx context.Context, id, owner string) error {
	return b.view(ctx, "heartbeat job", func(tx *bolt.Tx) error {
		j, err := queueOf(tx).get(id)
		if err != nil {
			return err
		}
		if j.State != JobRunning || j.Owner != owner {
			return fmt.Errorf("job %s is %s for %q: %w", id, j.State, j.Owner, ErrLeaseLost)
		}
		return nil
	})
}

// ReclaimExpired has nothing to reclaim (see Store): every running job
// belongs to this process, and a crashed one's jobs are recovered by
// RecoverRunning when the next process opens the file.
func (b *Bolt) ReclaimExpired(ctx context.Context) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("reclaim expired jobs: %w", err)
	}
	return 0, nil
}
