package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// maxPostgresKey bounds a record key: a btree index entry must fit in a
// third of a page (about 2,700 bytes with the bucket name).
const maxPostgresKey = 2048

// updateAttempts bounds Update's retries; one is needed only when another
// replica created the same absent record at the same moment.
const updateAttempts = 100

// errRecordRace is an Update that lost the race to create a record.
var errRecordRace = errors.New("record created concurrently")

func checkRecord(bucket, key string) error {
	if bucket == "" {
		return errors.New("bucket name is empty")
	}
	if key == "" {
		return errors.New("key is empty")
	}
	if len(key) > maxPostgresKey {
		return fmt.Errorf("key is %d bytes, over the limit of %d", len(key), maxPostgresKey)
	}
	return nil
}

// Put stores a record (see Store).
func (p *Postgres) Put(ctx context.Context, bucket, key string, value []byte) error {
	if err := checkRecord(bucket, key); err != nil {
		return fmt.Errorf("put record: %w", err)
	}
	_, err := p.pool.Exec(ctx, `INSERT INTO records (bucket, key, value) VALUES ($1, $2, $3)
		ON CONFLICT (bucket, key) DO UPDATE SET value = EXCLUDED.value`, pgText(bucket), []byte(key), nonNil(value))
	if err != nil {
		return fmt.Errorf("put record: %w", err)
	}
	return nil
}

// Get returns a record's value, or ErrNotFound.
func (p *Postgres) Get(ctx context.Context, bucket, key string) ([]byte, error) {
	if bucket == "" {
		return nil, errors.New("get record: bucket name is empty")
	}
	var v []byte
	err := p.pool.QueryRow(ctx, `SELECT value FROM records WHERE bucket = $1 AND key = $2`,
		pgText(bucket), []byte(key)).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("get record: %s/%s: %w", bucket, key, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get record: %w", err)
	}
	return nonNil(v), nil
}

// Delete removes a record; an absent one is not an error.
func (p *Postgres) Delete(ctx context.Context, bucket, key string) error {
	if bucket == "" {
		return errors.New("delete record: bucket name is empty")
	}
	if _, err := p.pool.Exec(ctx, `DELETE FROM records WHERE bucket = $1 AND key = $2`,
		pgText(bucket), []byte(key)); err != nil {
		return fmt.Errorf("delete record: %w", err)
	}
	return nil
}

// List returns the records whose key starts with prefix, in byte order.
func (p *Postgres) List(ctx context.Context, bucket, prefix string) ([]KV, error) {
	if bucket == "" {
		return nil, errors.New("list records: bucket name is empty")
	}
	// A range the index can walk: [prefix, the next prefix), open-ended when
	// prefix is empty or all 0xff.
	sql := `SELECT key, value FROM records WHERE bucket = $1 AND key >= $2 ORDER BY key`
	args := []any{pgText(bucket), []byte(prefix)}
	if end := prefixEnd([]byte(prefix)); end != nil {
		sql = `SELECT key, value FROM records WHERE bucket = $1 AND key >= $2 AND key < $3 ORDER BY key`
		args = append(args, end)
	}
	rows, err := p.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("list records: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (KV, error) {
		var k, v []byte
		err := r.Scan(&k, &v)
		return KV{Key: string(k), Value: nonNil(v)}, err
	})
	if err != nil {
		return nil, fmt.Errorf("list records: %w", err)
	}
	return out, nil
}

// prefixEnd is the least key greater than every key starting with prefix,
// nil when there is none.
func prefixEnd(prefix []byte) []byte {
	end := append([]byte(nil), prefix...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// Update replaces a record with fn(old) in one transaction that holds the
// row lock, so concurrent updates never lose one another's change (see
// Store). Two creators of an absent record cannot lock a row that is not
// there: the one whose insert conflicts runs fn again on the winner's value.
func (p *Postgres) Update(ctx context.Context, bucket, key string, fn func(old []byte) ([]byte, error)) error {
	if err := checkRecord(bucket, key); err != nil {
		return fmt.Errorf("update record: %w", err)
	}
	for range updateAttempts {
		err := pgx.BeginFunc(ctx, p.pool, func(tx pgx.Tx) error {
			return updateOnce(ctx, tx, pgText(bucket), []byte(key), fn)
		})
		if !errors.Is(err, errRecordRace) {
			if err != nil {
				return fmt.Errorf("update record: %w", err)
			}
			return nil
		}
	}
	return fmt.Errorf("update record: %s/%s: %w %d times", bucket, key, errRecordRace, updateAttempts)
}

func updateOnce(ctx context.Context, tx pgx.Tx, bucket string, key []byte, fn func(old []byte) ([]byte, error)) error {
	var old []byte
	err := tx.QueryRow(ctx, `SELECT value FROM records WHERE bucket = $1 AND key = $2 FOR UPDATE`, bucket, key).Scan(&old)
	exists := err == nil
	switch {
	case exists:
		old = nonNil(old)
	case errors.Is(err, pgx.ErrNoRows):
		old = nil
	default:
		return err
	}
	next, err := fn(old)
	if err != nil {
		return err
	}
	switch {
	case next == nil && exists:
		_, err = tx.Exec(ctx, `DELETE FROM records WHERE bucket = $1 AND key = $2`, bucket, key)
	case next == nil:
	case exists:
		_, err = tx.Exec(ctx, `UPDATE records SET value = $3 WHERE bucket = $1 AND key = $2`, bucket, key, next)
	default:
		tag, ierr := tx.Exec(ctx, `INSERT INTO records (bucket, key, value) VALUES ($1, $2, $3)
			ON CONFLICT (bucket, key) DO NOTHING`, bucket, key, next)
		if err = ierr; err == nil && tag.RowsAffected() == 0 {
			err = errRecordRace
		}
	}
	return err
}
