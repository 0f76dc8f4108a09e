package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

func testTx(t *testing.T, open opener) {
	ctx := context.Background()

	t.Run("writes commit together", func(t *testing.T) {
		s := open.fresh(t)
		require.NoError(t, s.Put(ctx, "b", "gone", []byte("x")))
		require.NoError(t, s.Tx(ctx, func(tx RecordTx) error {
			if _, err := tx.Get("b", "absent"); !errors.Is(err, ErrNotFound) {
				return fmt.Errorf("get of an absent record: %v", err)
			}
			if err := tx.Put("b", "k1", []byte("v1")); err != nil {
				return err
			}
			if err := tx.Insert("c", "k2", []byte("v2")); err != nil {
				return err
			}
			if v, err := tx.Get("b", "k1"); err != nil || string(v) != "v1" {
				return fmt.Errorf("read back %q, %v", v, err)
			}
			return tx.Delete("b", "gone")
		}))
		requireRecord(t, s, "b", "k1", "v1")
		requireRecord(t, s, "c", "k2", "v2")
		_, err := s.Get(ctx, "b", "gone")
		require.ErrorIs(t, err, ErrNotFound)
	})

	t.Run("an error rolls every write back", func(t *testing.T) {
		s := open.fresh(t)
		require.NoError(t, s.Put(ctx, "b", "k", []byte("old")))
		boom := errors.New("boom")
		err := s.Tx(ctx, func(tx RecordTx) error {
			if err := tx.Put("b", "k", []byte("new")); err != nil {
				return err
			}
			if err := tx.Put("b", "other", []byte("x")); err != nil {
				return err
			}
			return boom
		})
		require.ErrorIs(t, err, boom)
		requireRecord(t, s, "b", "k", "old")
		_, err = s.Get(ctx, "b", "other")
		require.ErrorIs(t, err, ErrNotFound)
	})

	t.Run("insert of a stored key is refused", func(t *testing.T) {
		s := open.fresh(t)
		require.NoError(t, s.Put(ctx, "b", "k", []byte("first")))
		err := s.Tx(ctx, func(tx RecordTx) error { return tx.Insert("b", "k", []byte("second")) })
		require.ErrorIs(t, err, ErrExists)
		requireRecord(t, s, "b", "k", "first")
	})

	t.Run("concurrent inserts of one key: one wins", func(t *testing.T) {
		s := open.fresh(t)
		var wins, exists atomic.Int32
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := s.Tx(ctx, func(tx RecordTx) error { return tx.Insert("b", "k", []byte(strconv.Itoa(i))) })
				switch {
				case err == nil:
					wins.Add(1)
				case errors.Is(err, ErrExists):
					exists.Add(1)
				default:
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		require.Equal(t, int32(1), wins.Load())
		require.Equal(t, int32(7), exists.Load())
	})

	// A counter bumped and a record appended under its value in one
	// transaction: readers never see a later record without every earlier
	// one (what the apply queue's merge order rests on), and no value is
	// handed out twice.
	t.Run("appends under a counter are seen in order", func(t *testing.T) {
		s := open.fresh(t)
		require.NoError(t, s.Put(ctx, "seq", "last", []byte("0")))
		const writers, each = 4, 25
		var wg sync.WaitGroup
		stop := make(chan struct{})
		var gaps atomic.Int32
		go func() { // the reader
			for {
				select {
				case <-stop:
					return
				default:
				}
				kvs, err := s.List(ctx, "log", "")
				if err != nil {
					continue
				}
				for i, kv := range kvs {
					if kv.Key != fmt.Sprintf("%06d", i+1) {
						gaps.Add(1)
					}
				}
			}
		}()
		for range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range each {
					require.NoError(t, s.Tx(ctx, func(tx RecordTx) error {
						v, err := tx.Get("seq", "last")
						if err != nil {
							return err
						}
						n, _ := strconv.Atoi(string(v))
						n++
						if err := tx.Put("seq", "last", []byte(strconv.Itoa(n))); err != nil {
							return err
						}
						return tx.Insert("log", fmt.Sprintf("%06d", n), []byte("x"))
					}))
				}
			}()
		}
		wg.Wait()
		close(stop)
		kvs, err := s.List(ctx, "log", "")
		require.NoError(t, err)
		require.Len(t, kvs, writers*each)
		require.Zero(t, gaps.Load(), "a reader saw a record before an earlier one")
	})
}

func requireRecord(t *testing.T, s Store, bucket, key, want string) {
	t.Helper()
	v, err := s.Get(context.Background(), bucket, key)
	require.NoError(t, err)
	require.Equal(t, want, string(v))
}
