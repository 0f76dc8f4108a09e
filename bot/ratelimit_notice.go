package bot

import (
	"context"
	"fmt"
	"time"

	"github.com/shardgate/shardgate/bot/webhook"
	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/github/pullreq"
	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/store/records"
)

// limitNotices wraps the event handlers so that a pull request whose job
// waits for GitHub's rate limit says so on its comment, and shows its status
// again once a job of it completes.
func (s *Server) limitNotices(hs []webhook.EventHandler) []webhook.EventHandler {
	out := make([]webhook.EventHandler, len(hs))
	for i, h := range hs {
		out[i] = noticing{EventHandler: h, s: s}
	}
	return out
}

type noticing struct {
	webhook.EventHandler
	s *Server
}

// Handle implements webhook.EventHandler.
func (h noticing) Handle(ctx context.Context, eventType, deliveryID string, payload []byte) error {
	err := h.EventHandler.Handle(ctx, eventType, deliveryID, payload)
	ref, ok := jobPR(payload)
	if !ok {
		return err
	}
	if err == nil {
		h.s.limitLifted(ctx, ref)
		return nil
	}
	if until, limit, ok := ghapp.LimitWait(err, h.s.now()); ok {
		h.s.showLimitWait(ctx, ref, limit, until)
	}
	return err
}

// limitNotice is the comment's status line while its pull request's jobs
// wait for a limit.
func limitNotice(limit string, until time.Time) string {
	return fmt.Sprintf("⏳ waiting for GitHub's rate limit (%s), resets at %s UTC", limit, until.UTC().Format("15:04"))
}

// showLimitWait puts the wait on the pull request's comment in place of its
// status, with one edit at most: only when the comment exists, no job of
// the pull request holds it (that job reports), and this notice was not
// tried before. An edit GitHub refuses for the limit is not tried again:
// the job's result replaces the status once the limit lifts.
func (s *Server) showLimitWait(ctx context.Context, ref pullreq.Ref, limit string, until time.Time) {
	unlock, ok := s.prLocks.TryLock(ref.Key())
	if !ok {
		return
	}
	defer unlock()
	log := logctx.Logger(ctx).WithField("limit", "github "+limit+" rate limit")
	st, err := s.rec.PR(ctx, ref)
	notice := limitNotice(limit, until)
	if err != nil || st == nil || st.CommentID == 0 || st.LimitNotice == notice {
		return
	}
	gh, err := ghapp.APIFor(s.clients, ref.Installation)
	if err != nil {
		return
	}
	plans, err := s.rec.Plans(ctx, ref, st.HeadSHA)
	if err != nil {
		log.WithError(err).Warn("show the wait for GitHub's limit: read the stored plans")
		return
	}
	shown := *st
	shown.Status = notice
	err = s.comments.Upsert(ctx, gh, &shown, s.planner.RenderComment(ctx, &shown, records.OrderPlans(plans, st.Projects)))
	if err != nil {
		log.WithError(err).Info("the wait for GitHub's limit is not shown: GitHub refuses the edit too")
	}
	st.CommentID, st.LimitNotice, st.LimitShown = shown.CommentID, notice, err == nil
	if err := s.rec.PutPR(ctx, st); err != nil {
		log.WithError(err).Warn("record the wait for GitHub's limit")
	}
}

// limitLifted shows the pull request's status again in place of a wait for
// a limit that a job completed after (one edit, only when the wait shows).
func (s *Server) limitLifted(ctx context.Context, ref pullreq.Ref) {
	st, err := s.rec.PR(ctx, ref)
	if err != nil || st == nil || !st.LimitShown {
		return
	}
	unlock := s.prLocks.Lock(ref.Key())
	defer unlock()
	if st, err = s.rec.PR(ctx, ref); err != nil || st == nil || !st.LimitShown {
		return
	}
	gh, err := ghapp.APIFor(s.clients, ref.Installation)
	if err != nil {
		return
	}
	plans, err := s.rec.Plans(ctx, ref, st.HeadSHA)
	if err == nil {
		err = s.planner.Publish(ctx, gh, st, records.OrderPlans(plans, st.Projects))
	}
	if err != nil {
		logctx.Logger(ctx).WithError(err).Warn("show the pull request's status again after a wait for GitHub's limit")
	}
}
