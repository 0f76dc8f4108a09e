package policy

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardgate/shardgate/planparse"
)

func TestEvaluateFailsClosed(t *testing.T) {
	oneChange := changeSet(moduleChange("orders", "billing", planparse.ActionCreate, nil, intp(4)))
	tests := []struct {
		name    string
		dir     string
		req     Request
		wantErr string
	}{
		{name: "nil change set", req: Request{}, wantErr: "no change set"},
		{
			name:    "attestations without a time",
			req:     Request{ChangeSet: oneChange, Attestations: []Attestation{attestation("orders", now)}},
			wantErr: "without the time",
		},
		{name: "rule errors at evaluation", dir: "runtimeerror", req: Request{ChangeSet: oneChange}, wantErr: "to_number"},
		{name: "deny value not an object", dir: "badshape", req: Request{ChangeSet: oneChange}, wantErr: "rule string_deny: deny value is not an object"},
		{name: "deny value without msg", dir: "missingmsg", req: Request{ChangeSet: oneChange}, wantErr: `rule no_msg: deny value: missing "msg"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []Option
			if tt.dir != "" {
				opts = append(opts, WithPolicyDirs(filepath.Join("testdata", tt.dir)))
			}
			d, err := newEngine(t, opts...).Evaluate(context.Background(), tt.req)
			require.ErrorContains(t, err, tt.wantErr)
			require.False(t, d.Allowed)
			require.Len(t, d.Violations, 1)
			require.Equal(t, RulePolicyError, d.Violations[0].Rule)
			require.False(t, d.Violations[0].Waivable)
			require.Contains(t, d.Violations[0].Message, tt.wantErr)
		})
	}
}

func TestEvaluateCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d, err := newEngine(t).Evaluate(ctx, Request{ChangeSet: changeSet(scaleChange("orders", "billing", 4, 8))})
	require.ErrorIs(t, err, context.Canceled)
	require.False(t, d.Allowed)
	require.Equal(t, RulePolicyError, d.Violations[0].Rule)
}

// TestEvaluateConcurrent shares one engine between goroutines; run with -race.
func TestEvaluateConcurrent(t *testing.T) {
	e := newEngine(t)
	reqs := []Request{
		{ChangeSet: changeSet(moduleChange("orders", "billing", planparse.ActionDelete, intp(4), nil))},
		{ChangeSet: changeSet(scaleChange("orders", "billing", 4, 8)), Attestations: []Attestation{attestation("orders", now.Add(time.Hour))}, Now: now},
		{ChangeSet: changeSet(scaleChange("orders", "billing", 2, 16)), Now: now},
		{ChangeSet: &planparse.ChangeSet{}, Coordinator: Coordinator{Consulted: true}},
	}
	want := make([]Decision, len(reqs))
	for i, r := range reqs {
		d, err := e.Evaluate(context.Background(), r)
		require.NoError(t, err)
		want[i] = d
	}

	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			for i := range 20 {
				n := (g + i) % len(reqs)
				d, err := e.Evaluate(context.Background(), reqs[n])
				if err != nil {
					errs <- err
					return
				}
				if d.Allowed != want[n].Allowed || !slices.Equal(d.Violations, want[n].Violations) || !slices.Equal(d.Warnings, want[n].Warnings) {
					errs <- fmt.Errorf("request %d: concurrent evaluation gave a different decision", n)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

func TestInputRedactsCoordinatorPassword(t *testing.T) {
	c := moduleChange("orders", "billing", planparse.ActionCreate, nil, intp(4))
	c.CoordinatorURL = "https://admin:s3cret@coordinator.internal:8443/api"
	in := inputOf(Request{ChangeSet: changeSet(c)})
	require.NotContains(t, in.String(), "s3cret")
	require.Contains(t, in.String(), "https://admin:xxxxx@coordinator.internal:8443/api")
	require.Equal(t, "http://coordinator:8080", planparse.RedactURLCredentials("http://coordinator:8080"))
}
