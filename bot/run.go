package bot

import (
	"context"
	"fmt"
	"time"

	"github.com/shardgate/shardgate/bot/server/listener"
	"github.com/shardgate/shardgate/bot/webhook"
	"github.com/shardgate/shardgate/store/applyqueue"
	"github.com/shardgate/shardgate/terraform/workdir"
)

// Start cleans up after a dead process, requeues interrupted jobs and starts
// the workers and the apply scheduler. What an earlier process left in the
// work dir (checkouts, terraform scratch with saved plans and variable files)
// is removed first; check runs it left in progress that no job will finish
// are completed in the background, GitHub being perhaps slow or down.
func (s *Server) Start(ctx context.Context) error {
	removed, err := workdir.Sweep(s.baseWorkDir, s.workDir)
	if len(removed) > 0 {
		s.log.WithField("removed", removed).Warn("removed checkouts and scratch left by an earlier process")
	}
	if err != nil {
		s.log.WithError(err).Error("remove what an earlier process left in the work dir")
	}
	if err := s.dispatcher.Start(ctx); err != nil {
		return err
	}
	s.health.Start(ctx)
	s.pruner.Start(ctx)
	s.driftSched.Start(ctx)
	if err := s.scheduler.Start(ctx); err != nil {
		return err
	}
	bg, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.stopBg = cancel
	s.startNotifier(bg)
	s.background.Add(1)
	go func() {
		defer s.background.Done()
		s.finishAbandonedChecks(bg)
	}()
	return nil
}

// Close drains the workers: running jobs get until ctx's deadline, then are
// handed back to the queue; running applies keep their state and are resumed by
// the next start once their lease expires. The run directory is removed.
func (s *Server) Close(ctx context.Context) {
	if s.stopBg != nil {
		s.stopBg()
	}
	s.driftSched.Close()
	s.dispatcher.Close(ctx)
	s.scheduler.Close(ctx)
	s.pruner.Close()
	s.health.Close()
	// After the jobs: the clean-up may wait for a pull request's lock.
	s.background.Wait()
	if err := s.run.Close(); err != nil {
		s.log.WithError(err).Warn("remove the run dir")
	}
}

func (s *Server) applyLease() time.Duration {
	if s.cfg.ApplyLease > 0 {
		return s.cfg.ApplyLease
	}
	return applyqueue.DefaultLease
}

// Run serves on cfg.Listen until ctx ends, then shuts down gracefully.
func (s *Server) Run(ctx context.Context, grace time.Duration) error {
	if err := s.Start(ctx); err != nil {
		return err
	}
	stopAdmin, err := s.startAdmin()
	if err != nil {
		s.Close(context.Background())
		return err
	}
	defer stopAdmin()
	stopStatus, err := s.startStatus()
	if err != nil {
		s.Close(context.Background())
		return err
	}
	defer stopStatus()
	srv := webhook.NewHTTPServer(s.cfg.Listen, s.Handler())
	serve, err := listener.Listen(ctx, s.cfg.Listen, s.cfg.ListenTLS, srv, s.log, s.onListening)
	if err != nil {
		s.Close(context.Background())
		return err
	}
	errc := make(chan error, 1)
	go func() { errc <- serve() }()
	select {
	case err := <-errc:
		s.Close(context.Background())
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		s.log.WithError(err).Warn("webhook listener: requests outlived the shutdown grace and were cut")
	}
	s.Close(sctx)
	s.log.Info("shardgate stopped")
	return nil
}
