package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// records returns the nested bucket of a record bucket name, creating it when
// create is set; nil when it does not exist.
func records(tx *bolt.Tx, bucket string, create bool) (*bolt.Bucket, error) {
	if bucket == "" {
		return nil, errors.New("bucket name is empty")
	}
	root := tx.Bucket(bucketRecords)
	if !create {
		return root.Bucket([]byte(bucket)), nil
	}
	bk, err := root.CreateBucketIfNotExists([]byte(bucket))
	if err != nil {
		return nil, fmt.Errorf("create bucket %q: %w", bucket, err)
	}
	return bk, nil
}

func checkKey(key string) error {
	if key == "" {
		return errors.New("key is empty")
	}
	if len(key) > bolt.MaxKeySize {
		return fmt.Errorf("key is %d bytes, over the limit of %d", len(key), bolt.MaxKeySize)
	}
	return nil
}

// Put stores a record, creating its bucket on first use.
func (b *Bolt) Put(ctx context.Context, bucket, key string, value []byte) error {
	if err := checkKey(key); err != nil {
		return fmt.Errorf("put record: %w", err)
	}
	return b.batch(ctx, "put record", func(tx *bolt.Tx) error {
		bk, err := records(tx, bucket, true)
		if err != nil {
			return err
		}
		return bk.Put([]byte(key), nonNil(value))
	})
}

// Get returns a copy of a record's value, or ErrNotFound.
func (b *Bolt) Get(ctx context.Context, bucket, key string) ([]byte, error) {
	var v []byte
	err := b.view(ctx, "get record", func(tx *bolt.Tx) error {
		bk, err := records(tx, bucket, false)
		if err != nil {
			return err
		}
		if bk != nil {
			v = clone(bk.Get([]byte(key)))
		}
		if v == nil {
			return fmt.Errorf("%s/%s: %w", bucket, key, ErrNotFound)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return v, nil
}

// Delete removes a record; an absent one is not an error.
func (b *Bolt) Delete(ctx context.Context, bucket, key string) error {
	return b.batch(ctx, "delete record", func(tx *bolt.Tx) error {
		bk, err := records(tx, bucket, false)
		if err != nil || bk == nil || key == "" {
			return err
		}
		return bk.Delete([]byte(key))
	})
}

// List returns copies of the records whose key starts with prefix, by key.
func (b *Bolt) List(ctx context.Context, bucket, prefix string) ([]KV, error) {
	var out []KV
	err := b.view(ctx, "list records", func(tx *bolt.Tx) error {
		bk, err := records(tx, bucket, false)
		if err != nil || bk == nil {
			return err
		}
		p := []byte(prefix)
		c := bk.Cursor()
		for k, v := c.Seek(p); k != nil && bytes.HasPrefix(k, p); k, v = c.Next() {
			out = append(out, KV{Key: string(k), Value: nonNil(clone(v))})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Update replaces a record with fn(old) in one write transaction, so
// concurrent updates of the same key never lose one another's change. An
// error from fn is returned as is (wrapped) and leaves the record unchanged.
func (b *Bolt) Update(ctx context.Context, bucket, key string, fn func(old []byte) ([]byte, error)) error {
	if err := checkKey(key); err != nil {
		return fmt.Errorf("update record: %w", err)
	}
	return b.batch(ctx, "update record", func(tx *bolt.Tx) error {
		bk, err := records(tx, bucket, true)
		if err != nil {
			return err
		}
		// fn may keep old; it must not alias the memory map.
		next, err := fn(clone(bk.Get([]byte(key))))
		if err != nil {
			return err
		}
		if next == nil {
			return bk.Delete([]byte(key))
		}
		return bk.Put([]byte(key), next)
	})
}

// nonNil keeps an empty value distinguishable from an absent one for callers
// that compare with nil.
func nonNil(v []byte) []byte {
	if v == nil {
		return []byte{}
	}
	return v
}
