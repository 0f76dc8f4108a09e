package store

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func testRecords(t *testing.T, open opener) {
	ctx := context.Background()

	t.Run("put get overwrite delete", func(t *testing.T) {
		s := open.fresh(t)
		require.NoError(t, s.Put(ctx, "plans", "k", []byte("v1")))
		require.NoError(t, s.Put(ctx, "plans", "k", []byte("v2")))
		got, err := s.Get(ctx, "plans", "k")
		require.NoError(t, err)
		require.Equal(t, []byte("v2"), got)

		require.NoError(t, s.Delete(ctx, "plans", "k"))
		_, err = s.Get(ctx, "plans", "k")
		require.ErrorIs(t, err, ErrNotFound)
		require.NoError(t, s.Delete(ctx, "plans", "k"), "deleting an absent record is not an error")
		require.NoError(t, s.Delete(ctx, "no-such-bucket", "k"))
	})

	t.Run("absent records are not found", func(t *testing.T) {
		s := open.fresh(t)
		require.NoError(t, s.Put(ctx, "plans", "k", []byte("v")))
		for _, tt := range []struct{ name, bucket, key string }{
			{name: "absent key", bucket: "plans", key: "other"},
			{name: "absent bucket", bucket: "attestations", key: "k"},
			{name: "key of another bucket", bucket: "labels", key: "k"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				_, err := s.Get(ctx, tt.bucket, tt.key)
				require.ErrorIs(t, err, ErrNotFound)
			})
		}
	})

	t.Run("buckets are separate from each other and from jobs", func(t *testing.T) {
		s := open.fresh(t)
		require.NoError(t, s.Put(ctx, "a", "k", []byte("in a")))
		require.NoError(t, s.Put(ctx, "b", "k", []byte("in b")))
		// Names a store might use internally must still be plain record buckets.
		require.NoError(t, s.Put(ctx, "jobs", "00000000000000000001", []byte("record")))
		j := enqueue(t, s, "", "x", []byte("job"))
		for bucket, want := range map[string]string{"a": "in a", "b": "in b"} {
			got, err := s.Get(ctx, bucket, "k")
			require.NoError(t, err)
			require.Equal(t, []byte(want), got)
		}
		require.Equal(t, []byte("job"), getJob(t, s, j.ID).Payload)
		got, err := s.Get(ctx, "jobs", "00000000000000000001")
		require.NoError(t, err)
		require.Equal(t, []byte("record"), got)
	})

	t.Run("list by prefix in key order", func(t *testing.T) {
		s := open.fresh(t)
		for _, k := range []string{"pr/2/b", "pr/10/a", "pr/1/b", "other", "pr/1/a", "pr"} {
			require.NoError(t, s.Put(ctx, "results", k, []byte("v:"+k)))
		}
		require.NoError(t, s.Put(ctx, "elsewhere", "pr/1/c", []byte("x")))
		tests := []struct {
			name, bucket, prefix string
			want                 []string
		}{
			{name: "one pr", bucket: "results", prefix: "pr/1/", want: []string{"pr/1/a", "pr/1/b"}},
			{name: "all prs", bucket: "results", prefix: "pr/", want: []string{"pr/1/a", "pr/1/b", "pr/10/a", "pr/2/b"}},
			{name: "prefix equal to a key", bucket: "results", prefix: "pr",
				want: []string{"pr", "pr/1/a", "pr/1/b", "pr/10/a", "pr/2/b"}},
			{name: "empty prefix", bucket: "results", prefix: "",
				want: []string{"other", "pr", "pr/1/a", "pr/1/b", "pr/10/a", "pr/2/b"}},
			{name: "no match", bucket: "results", prefix: "zz"},
			{name: "absent bucket", bucket: "nothing", prefix: ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := s.List(ctx, tt.bucket, tt.prefix)
				require.NoError(t, err)
				var keys []string
				for _, kv := range got {
					keys = append(keys, kv.Key)
					require.Equal(t, []byte("v:"+kv.Key), kv.Value)
				}
				require.Equal(t, tt.want, keys)
			})
		}
	})

	t.Run("values are copies", func(t *testing.T) {
		s := open.fresh(t)
		v := []byte("value")
		require.NoError(t, s.Put(ctx, "b", "k", v))
		v[0] = 'X'
		got, err := s.Get(ctx, "b", "k")
		require.NoError(t, err)
		require.Equal(t, []byte("value"), got)
		got[0] = 'Y'
		list, err := s.List(ctx, "b", "")
		require.NoError(t, err)
		require.Equal(t, []KV{{Key: "k", Value: []byte("value")}}, list)
	})

	t.Run("empty value is a record", func(t *testing.T) {
		s := open.fresh(t)
		require.NoError(t, s.Put(ctx, "b", "k", nil))
		got, err := s.Get(ctx, "b", "k")
		require.NoError(t, err)
		require.Empty(t, got)
	})

	t.Run("empty key or bucket is refused", func(t *testing.T) {
		s := open.fresh(t)
		require.Error(t, s.Put(ctx, "b", "", []byte("v")))
		require.Error(t, s.Put(ctx, "", "k", []byte("v")))
		require.Error(t, s.Update(ctx, "b", "", func([]byte) ([]byte, error) { return []byte("v"), nil }))
	})

	testRecordUpdate(t, open)
}

func testRecordUpdate(t *testing.T, open opener) {
	ctx := context.Background()
	errRefused := errors.New("refused by fn")
	tests := []struct {
		name    string
		initial []byte // nil: absent
		fn      func(old []byte) ([]byte, error)
		wantOld []byte
		want    []byte // nil: absent afterwards
		wantErr error
	}{
		{name: "creates an absent record",
			fn:   func([]byte) ([]byte, error) { return []byte("new"), nil },
			want: []byte("new")},
		{name: "replaces from the old value", initial: []byte("a"), wantOld: []byte("a"),
			fn:   func(old []byte) ([]byte, error) { return append(old, 'b'), nil },
			want: []byte("ab")},
		{name: "nil result deletes", initial: []byte("a"), wantOld: []byte("a"),
			fn: func([]byte) ([]byte, error) { return nil, nil }},
		{name: "nil result on absent stays absent",
			fn: func([]byte) ([]byte, error) { return nil, nil }},
		{name: "error leaves the value unchanged", initial: []byte("a"), wantOld: []byte("a"),
			fn:   func(old []byte) ([]byte, error) { old[0] = 'Z'; return []byte("new"), errRefused },
			want: []byte("a"), wantErr: errRefused},
		{name: "error on absent stores nothing",
			fn:      func([]byte) ([]byte, error) { return []byte("new"), errRefused },
			wantErr: errRefused},
	}
	for _, tt := range tests {
		t.Run("update "+tt.name, func(t *testing.T) {
			s := open.fresh(t)
			if tt.initial != nil {
				require.NoError(t, s.Put(ctx, "b", "k", tt.initial))
			}
			var sawOld []byte
			err := s.Update(ctx, "b", "k", func(old []byte) ([]byte, error) {
				sawOld = append([]byte(nil), old...)
				return tt.fn(old)
			})
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
			} else {
				require.NoError(t, err)
			}
			require.Equal(t, tt.wantOld, sawOld)
			got, err := s.Get(ctx, "b", "k")
			if tt.want == nil {
				require.ErrorIs(t, err, ErrNotFound)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}

	t.Run("update is atomic under concurrency", func(t *testing.T) {
		s := open.fresh(t)
		const goroutines, each = 8, 25
		var wg sync.WaitGroup
		for range goroutines {
			wg.Go(func() {
				for range each {
					err := s.Update(ctx, "counters", "n", func(old []byte) ([]byte, error) {
						n := 0
						if old != nil {
							var err error
							if n, err = strconv.Atoi(string(old)); err != nil {
								return nil, err
							}
						}
						return []byte(strconv.Itoa(n + 1)), nil
					})
					if err != nil {
						t.Errorf("update: %v", err) // not require: this is not the test goroutine
						return
					}
				}
			})
		}
		wg.Wait()
		got, err := s.Get(ctx, "counters", "n")
		require.NoError(t, err)
		require.Equal(t, strconv.Itoa(goroutines*each), string(got))
	})
}
