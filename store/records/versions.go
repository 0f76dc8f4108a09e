package records

import (
	"context"
	"encoding/json"

	"github.com/shardgate/shardgate/coord"
	"github.com/shardgate/shardgate/store"
)

// Versions keeps the highest metadataVersion seen per coordinator group in
// the store, so a restored Redis is noticed across restarts.
type Versions struct {
	st  store.Store
	url string
}

// MetadataVersions remembers the metadata versions of the coordinator at url
// in st.
func MetadataVersions(st store.Store, url string) Versions { return Versions{st: st, url: url} }

var _ coord.VersionMemory = Versions{}

func (v Versions) key(prefix, group string) string { return v.url + "|" + prefix + "/" + group }

// HighestMetadataVersion implements coord.VersionMemory.
func (v Versions) HighestMetadataVersion(ctx context.Context, prefix, group string) (int64, bool, error) {
	p, err := GetJSON[int64](ctx, v.st, bucketVersions, v.key(prefix, group))
	if err != nil || p == nil {
		return 0, false, err
	}
	return *p, true, nil
}

// RecordMetadataVersion implements coord.VersionMemory.
func (v Versions) RecordMetadataVersion(ctx context.Context, prefix, group string, version int64) error {
	return v.st.Update(ctx, bucketVersions, v.key(prefix, group), func(old []byte) ([]byte, error) {
		var before int64
		if old != nil {
			if err := json.Unmarshal(old, &before); err != nil {
				return nil, err
			}
		}
		return json.Marshal(max(before, version))
	})
}
