package store

import (
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Tx runs fn in one write transaction (see Store). bbolt has one writer at
// a time, so what fn reads cannot change under it.
func (b *Bolt) Tx(ctx context.Context, fn func(tx RecordTx) error) error {
	return b.update(ctx, "record transaction", func(tx *bolt.Tx) error {
		return fn(boltRecordTx{tx: tx})
	})
}

// boltRecordTx is RecordTx on a bbolt write transaction.
type boltRecordTx struct{ tx *bolt.Tx }

func (t boltRecordTx) Get(bucket, key string) ([]byte, error) {
	bk, err := records(t.tx, bucket, false)
	if err != nil {
		return nil, err
	}
	var v []byte
	if bk != nil {
		v = clone(bk.Get([]byte(key)))
	}
	if v == nil {
		return nil, fmt.Errorf("%s/%s: %w", bucket, key, ErrNotFound)
	}
	return v, nil
}

func (t boltRecordTx) Put(bucket, key string, value []byte) error {
	if err := checkKey(key); err != nil {
		return err
	}
	bk, err := records(t.tx, bucket, true)
	if err != nil {
		return err
	}
	return bk.Put([]byte(key), clone(nonNil(value)))
}

func (t boltRecordTx) Insert(bucket, key string, value []byte) error {
	if err := checkKey(key); err != nil {
		return err
	}
	bk, err := records(t.tx, bucket, true)
	if err != nil {
		return err
	}
	if bk.Get([]byte(key)) != nil {
		return fmt.Errorf("%s/%s: %w", bucket, key, ErrExists)
	}
	return bk.Put([]byte(key), clone(nonNil(value)))
}

func (t boltRecordTx) Delete(bucket, key string) error {
	bk, err := records(t.tx, bucket, false)
	if err != nil || bk == nil || key == "" {
		return err
	}
	return bk.Delete([]byte(key))
}
