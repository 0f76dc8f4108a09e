package bot

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/shardgate/shardgate/bot/server/notify"
	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/bot/statuspage"
	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/policy/report"
	"github.com/shardgate/shardgate/store"
)

// wireNotifier builds the sender of the configured notifications (nil
// without any): its deliveries live in the store's outbox, claimed under
// owner as jobs are.
func (s *Server) wireNotifier(owner string) error {
	var outbox store.Outbox
	if len(s.cfg.Notifications) > 0 {
		o, ok := s.store.(store.Outbox)
		if !ok {
			return fmt.Errorf("new server: notifications: the %T store keeps no outbox", s.store)
		}
		outbox = o
	}
	n, err := notify.New(s.cfg.Notifications, outbox, owner, s.redact, s.metrics, s.log)
	if err != nil {
		return fmt.Errorf("new server: %w", err)
	}
	if n != nil {
		n.Now = s.now
	}
	s.notifier = n
	return nil
}

// startNotifier sends pending deliveries (this process's and what a dead
// one left) in the background until ctx ends.
func (s *Server) startNotifier(ctx context.Context) {
	if s.notifier == nil {
		return
	}
	s.background.Add(1)
	go func() {
		defer s.background.Done()
		s.notifier.Run(ctx)
	}()
}

// notifyJobFailed emits job_failed for a webhook job that failed for good,
// before anything is reported through GitHub (which may be what failed).
// The key is the job and its attempts: a job failed again after a retry
// by hand is another event.
func (s *Server) notifyJobFailed(ctx context.Context, job *store.Job, jobErr error) {
	if s.notifier == nil {
		return
	}
	var p prPayload
	if json.Unmarshal(job.Payload, &p) != nil || p.Repository.Name == "" {
		logctx.Logger(ctx).WithField("job", job.ID).Warn("job_failed not sent: the job names no repository")
		return
	}
	repo := p.Repository.Owner.Login + "/" + p.Repository.Name
	number := p.number()
	link := ""
	if number > 0 {
		link = notify.PullURL(notify.WebURL(s.cfg.GitHubAPIURL), repo, number)
	}
	tries := "once"
	if job.Attempts > 1 {
		tries = fmt.Sprintf("%d times", job.Attempts)
	}
	summary := fmt.Sprintf("shardgate could not finish handling a %s event (tried %s): %s", job.Event, tries, report.FirstLine(jobErr.Error()))
	s.notifier.Emit(ctx, fmt.Sprintf("job %s/%d", job.ID, job.Attempts), notify.Event{
		Event: serverconfig.EventJobFailed, Repository: repo, PullRequest: notify.PR(number), Summary: summary, URL: link,
		At: s.now().UTC(),
	})
}

// notificationCounts are the outbox's pending (to send, or being sent) and
// failed deliveries, for the metrics.
func (s *Server) notificationCounts(ctx context.Context) (pending, failed int, err error) {
	o, ok := s.store.(store.Outbox)
	if !ok {
		return 0, 0, fmt.Errorf("the %T store keeps no outbox", s.store)
	}
	counts, err := o.CountNotifications(ctx)
	if err != nil {
		return 0, 0, err
	}
	return counts[store.NotificationPending] + counts[store.NotificationSending], counts[store.NotificationFailed], nil
}

// maxListedNotifications bounds each list of the status page's section.
const maxListedNotifications = 50

// notificationList is the status page's view of the outbox; receivers are
// shown by host (their URLs may hold a token).
type notificationList struct {
	outbox store.Outbox
	hosts  map[string]string
}

var _ statuspage.Notifications = notificationList{}

// statusNotifications is the status page's source of notifications, nil
// when none are configured.
func (s *Server) statusNotifications() statuspage.Notifications {
	o, ok := s.store.(store.Outbox)
	if s.notifier == nil || !ok {
		return nil
	}
	l := notificationList{outbox: o, hosts: map[string]string{}}
	for _, r := range s.cfg.Notifications {
		l.hosts[r.Key()] = r.Host()
	}
	return l
}

func (l notificationList) PendingNotifications(ctx context.Context) ([]statuspage.Notification, error) {
	return l.list(ctx, store.NotificationPending, store.NotificationSending)
}

func (l notificationList) FailedNotifications(ctx context.Context) ([]statuspage.Notification, error) {
	return l.list(ctx, store.NotificationFailed)
}

func (l notificationList) list(ctx context.Context, states ...store.NotificationState) ([]statuspage.Notification, error) {
	ns, err := l.outbox.Notifications(ctx, maxListedNotifications, states...)
	if err != nil {
		return nil, err
	}
	out := make([]statuspage.Notification, 0, len(ns))
	for _, n := range ns {
		host, ok := l.hosts[n.Receiver]
		if !ok {
			host = "a receiver no longer configured"
		}
		sn := statuspage.Notification{ID: n.ID, Event: n.Event, Receiver: host, Attempts: n.Attempts, Error: n.LastError, At: n.UpdatedAt}
		if n.State == store.NotificationPending {
			sn.NextTry = n.NotBefore
		}
		out = append(out, sn)
	}
	return out, nil
}
