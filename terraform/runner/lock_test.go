package runner

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The samples in testdata/ are terraform 1.5.7's real output, captured by
// the real-binary tests (run them with -update to refresh).
func TestParseStateLock(t *testing.T) {
	tests := []struct {
		file string
		want *StateLockError
	}{
		{
			file: "lock_local_1.5.7.txt",
			want: &StateLockError{
				ID:          "b1abe7d8-eda2-8011-394a-5d3bf353c2b2",
				Path:        "terraform.tfstate",
				Operation:   "OperationTypeApply",
				Who:         "root@vm",
				Version:     "1.5.7",
				Created:     time.Date(2026, 11, 30, 6, 25, 21, 135902778, time.UTC),
				Message:     "resource temporarily unavailable",
				HolderKnown: true,
			},
		},
		{
			// pg prints the refused process's own info: it must not be
			// reported as the holder.
			file: "lock_pg_1.5.7.txt",
			want: &StateLockError{Message: "Workspace is already locked: default"},
		},
		{
			file: "lock_pg_create_1.5.7.txt",
			want: &StateLockError{Message: "Already locked for workspace creation: default"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", tt.file))
			require.NoError(t, err)
			require.Equal(t, tt.want, parseStateLock(string(b)))
		})
	}
}

func TestParseStateLockEdges(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want *StateLockError
	}{
		{name: "no lock error", in: "Error: Unsupported argument\n", want: nil},
		{name: "headline without info", in: "Error: Error acquiring the state lock\n\nError message: boom\n",
			want: &StateLockError{Message: "boom"}},
		{name: "boxed diagnostic and unparsable time", in: "│ Error: Error acquiring the state lock\n│ \n│ Lock Info:\n│   ID:        abc\n│   Who:       ann@host\n│   Created:   yesterday\n│   Info:      deploy 42\n│ \n│   Operation: ignored-after-block\n",
			want: &StateLockError{ID: "abc", Who: "ann@host", Info: "deploy 42", HolderKnown: true}},
		{name: "monotonic suffix", in: "Error acquiring the state lock\nLock Info:\n  ID: x\n  Created:   2024-01-02 03:04:05.5 +0000 UTC m=+0.001\n",
			want: &StateLockError{ID: "x", Created: time.Date(2024, 1, 2, 3, 4, 5, 5e8, time.UTC), HolderKnown: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, parseStateLock(tt.in))
		})
	}
}

func TestStateLockErrorMessage(t *testing.T) {
	known := &StateLockError{ID: "abc", Who: "ann@host", Operation: "OperationTypeApply",
		Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Path: "terraform.tfstate", HolderKnown: true}
	require.Equal(t, "state lock abc is held by ann@host running apply since 2026-01-02T03:04:05Z (terraform.tfstate)", known.Error())
	unknown := &StateLockError{Message: "Workspace is already locked: default"}
	require.Equal(t, "state lock is held by another terraform operation; the backend does not say which (Workspace is already locked: default)", unknown.Error())
	require.Equal(t, 2*time.Hour, known.Age(known.Created.Add(2*time.Hour)))
	require.Zero(t, unknown.Age(time.Now()))
}

func TestDescribesRequester(t *testing.T) {
	started := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	base := StateLockError{ID: "x", Operation: "OperationTypePlan", Who: "bot@host", Created: started.Add(300 * time.Millisecond), HolderKnown: true}
	tests := []struct {
		name   string
		mutate func(e *StateLockError)
		want   bool
	}{
		{name: "our own plan, made after we started", want: true},
		{name: "holder runs another operation", mutate: func(e *StateLockError) { e.Operation = "OperationTypeApply" }},
		{name: "holder is someone else", mutate: func(e *StateLockError) { e.Who = "ann@laptop" }},
		{name: "holder locked before we started", mutate: func(e *StateLockError) { e.Created = started.Add(-time.Second) }},
		{name: "already unknown", mutate: func(e *StateLockError) { e.HolderKnown = false }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := base
			if tt.mutate != nil {
				tt.mutate(&e)
			}
			require.Equal(t, tt.want, e.describesRequester("plan", started, "bot@host"))
		})
	}
	require.Contains(t, terraformWho(), "@")
}

func TestStateLockErrorHolder(t *testing.T) {
	created := time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)
	e := &StateLockError{ID: "5d3c", Who: "alice@laptop", Operation: "OperationTypeApply", Created: created}
	require.Equal(t, "alice@laptop (apply, lock id 5d3c) since 2026-11-30T06:00:00Z", e.Holder())
	require.Equal(t, "(unknown) ((unknown), lock id (unknown)) since an unknown time", (&StateLockError{}).Holder())
}
