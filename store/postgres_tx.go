package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Tx runs fn in one transaction (see Store). Get takes the row lock (FOR
// UPDATE); an absent record cannot be locked, so two transactions creating
// one meet at Insert, where the later one waits for the earlier's commit
// and then fails with ErrExists.
func (p *Postgres) Tx(ctx context.Context, fn func(tx RecordTx) error) error {
	err := pgx.BeginFunc(ctx, p.pool, func(tx pgx.Tx) error {
		return fn(pgRecordTx{ctx: ctx, tx: tx})
	})
	if err != nil {
		return fmt.Errorf("record transaction: %w", err)
	}
	return nil
}

// pgRecordTx is RecordTx on a pgx transaction.
type pgRecordTx struct {
	ctx context.Context
	tx  pgx.Tx
}

func (t pgRecordTx) Get(bucket, key string) ([]byte, error) {
	if bucket == "" {
		return nil, errors.New("bucket name is empty")
	}
	var v []byte
	err := t.tx.QueryRow(t.ctx, `SELECT value FROM records WHERE bucket = $1 AND key = $2 FOR UPDATE`,
		pgText(bucket), []byte(key)).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%s/%s: %w", bucket, key, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return nonNil(v), nil
}

func (t pgRecordTx) Put(bucket, key string, value []byte) error {
	if err := checkRecord(bucket, key); err != nil {
		return err
	}
	_, err := t.tx.Exec(t.ctx, `INSERT INTO records (bucket, key, value) VALUES ($1, $2, $3)
		ON CONFLICT (bucket, key) DO UPDATE SET value = EXCLUDED.value`, pgText(bucket), []byte(key), nonNil(value))
	return err
}

func (t pgRecordTx) Insert(bucket, key string, value []byte) error {
	if err := checkRecord(bucket, key); err != nil {
		return err
	}
	tag, err := t.tx.Exec(t.ctx, `INSERT INTO records (bucket, key, value) VALUES ($1, $2, $3)
		ON CONFLICT (bucket, key) DO NOTHING`, pgText(bucket), []byte(key), nonNil(value))
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%s/%s: %w", bucket, key, ErrExists)
	}
	return nil
}

func (t pgRecordTx) Delete(bucket, key string) error {
	if bucket == "" {
		return errors.New("bucket name is empty")
	}
	_, err := t.tx.Exec(t.ctx, `DELETE FROM records WHERE bucket = $1 AND key = $2`, pgText(bucket), []byte(key))
	return err
}
