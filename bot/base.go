package bot

import (
	"context"
	"fmt"

	"github.com/google/go-github/v60/github"
	"github.com/sirupsen/logrus"

	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/pullreq"
)

// Base is what every event handler shares: the server and payload decoding.
type Base struct{ s *Server }

// parse decodes a webhook payload into go-github's type for the event; unknown
// fields are ignored, so newer GitHub payloads still decode.
func parse[T any](eventType string, payload []byte) (T, error) {
	var zero T
	ev, err := github.ParseWebHook(eventType, payload)
	if err != nil {
		return zero, fmt.Errorf("decode %s event: %w", eventType, err)
	}
	t, ok := ev.(T)
	if !ok {
		return zero, fmt.Errorf("decode %s event: unexpected type %T", eventType, ev)
	}
	return t, nil
}

// prRef names the pull request of an event from its repository and number.
func prRef(inst *github.Installation, repo *github.Repository, number int) (pullreq.Ref, error) {
	if inst.GetID() == 0 {
		return pullreq.Ref{}, errNoInstallation
	}
	return pullreq.Ref{Installation: inst.GetID(), Owner: repo.GetOwner().GetLogin(), Repo: repo.GetName(), Number: number}, nil
}

// withPR enriches the context's logger with the pull request.
func withPR(ctx context.Context, ref pullreq.Ref) context.Context {
	return logctx.WithLogger(ctx, logctx.Logger(ctx).WithFields(logrus.Fields{logctx.FieldInstallation: ref.Installation, logctx.FieldRepo: ref.FullName(), logctx.FieldPR: ref.Number}))
}
