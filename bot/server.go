package bot

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sirupsen/logrus"

	"github.com/shardgate/shardgate/bot/apply"
	"github.com/shardgate/shardgate/bot/approval"
	"github.com/shardgate/shardgate/bot/drift"
	"github.com/shardgate/shardgate/bot/livestate"
	"github.com/shardgate/shardgate/bot/plan"
	"github.com/shardgate/shardgate/bot/prreport"
	"github.com/shardgate/shardgate/bot/server/livelog"
	"github.com/shardgate/shardgate/bot/server/metrics"
	"github.com/shardgate/shardgate/bot/server/notify"
	"github.com/shardgate/shardgate/bot/server/retention"
	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/bot/statuspage"
	"github.com/shardgate/shardgate/bot/webhook"
	"github.com/shardgate/shardgate/github/ghapp"
	"github.com/shardgate/shardgate/internal/keyedmutex"
	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/internal/reach"
	"github.com/shardgate/shardgate/internal/redact"
	"github.com/shardgate/shardgate/policy"
	"github.com/shardgate/shardgate/policy/repopolicy"
	"github.com/shardgate/shardgate/store"
	"github.com/shardgate/shardgate/store/applyqueue"
	"github.com/shardgate/shardgate/store/records"
	"github.com/shardgate/shardgate/terraform/planrun"
	"github.com/shardgate/shardgate/terraform/runner"
	"github.com/shardgate/shardgate/terraform/workdir"
)

// Server is shardgate's GitHub App service: it wires the Planner and the
// Applier with what they use, and runs the event handlers that call them, the
// intake, the dispatcher, the scheduler and the admin listener.
type Server struct {
	onListening func(net.Addr)
	cfg         *serverconfig.Config
	store       store.Store
	rec         records.Store
	clients     ghapp.ClientCreator
	runner      *runner.Runner
	binaries    *planrun.Binaries // runner's binary and terraform.binaries
	// sandboxErr is why terraform cannot be confined although the
	// configuration requires it (sandbox.go): nothing is planned or applied.
	sandboxErr error
	engine     *policy.Engine
	rules      []policy.RuleInfo
	log        *logrus.Entry
	now        func() time.Time
	redact     *redact.Redactor
	// workDir is this process's run directory (checkouts, terraform
	// scratch) under baseWorkDir, the configured work dir.
	workDir     string
	baseWorkDir string
	run         *workdir.Run
	ghTransport http.RoundTripper
	// background is the restart's clean-up of check runs; Close ends it.
	background sync.WaitGroup
	stopBg     context.CancelFunc

	coordHTTP *http.Client
	coords    *livestate.Coordinators

	prLocks keyedmutex.Mutex
	// The services the handlers and the flows share (flows.go).
	approvers *approval.Approvers
	comments  *prreport.Comments
	checks    *prreport.Checks
	labels    *approval.Labels
	checkouts *plan.Checkouts
	policies  *repopolicy.Loader
	// planner is the plan flow the event handlers call.
	planner *plan.Planner

	applies   *applyqueue.Queue
	scheduler *applyqueue.Scheduler
	// applier runs the applies the scheduler starts.
	applier *apply.Applier
	// notifier sends the configured notifications (notifications.go).
	notifier *notify.Notifier

	// drift checks a repository's projects for drift, on driftSched's
	// schedule (drift.interval) and on /shardgate drift.
	drift      *driftChecks
	driftSched *drift.Scheduler

	dispatcher *webhook.Dispatcher
	health     *webhook.StoreHealth
	pruner     *retention.Pruner
	intake     *webhook.Intake
	metrics    *metrics.Metrics
	registry   *prometheus.Registry
	adminAddr  string // the admin listener's bound address, once it runs
	// The status page (status.go): its address once it runs, the live logs
	// of this process's terraform jobs, the drift checks it shows.
	statusAddr  string
	liveLogs    *livelog.Hub
	driftSource statuspage.DriftSource
	// reach is how the last request to GitHub and to each coordinator
	// ended, for the status page (status_failures.go).
	reach *reach.Tracker
	// replaced are handlers (tests) that take the place of the ones of the
	// events they name.
	replaced []webhook.EventHandler
}

// New wires a server from a validated configuration and an open store. Every
// secret of cfg is redacted from what the server writes: its logger (changed
// in place, see redact.Logs), GitHub bodies, stored errors.
func New(cfg *serverconfig.Config, st store.Store, opts ...Option) (_ *Server, err error) {
	s := &Server{cfg: cfg, store: st, now: time.Now,
		log: logctx.NewLogger(os.Stderr, logrus.InfoLevel)}
	for _, o := range opts {
		o(s)
	}
	// Metrics first, so that every part is created with its observers.
	s.registry = prometheus.NewRegistry()
	s.metrics = metrics.New(s.registry, s.metricSources())
	s.redact = cfg.Redactor()
	redact.Logs(s.log, s.redact)
	s.rec = records.New(st, s.redact)
	s.reach = reach.New(s.now, s.redact.Redact)
	s.coords = livestate.New(cfg, st, s.log, s.metrics, s.trackedCoordinatorHTTP())
	s.coords.Now = s.now
	if s.clients == nil {
		if s.clients, err = s.githubClients(); err != nil {
			return nil, err
		}
	}
	if err := s.openWorkDir(); err != nil {
		return nil, fmt.Errorf("new server: %w", err)
	}
	defer func() {
		if err != nil {
			if cerr := s.run.Close(); cerr != nil {
				s.log.WithError(cerr).Warn("remove the run dir")
			}
		}
	}()
	bin, _, err := runner.FindTerraform(cfg.TerraformBinary, "")
	if err != nil {
		return nil, fmt.Errorf("new server: %w", err)
	}
	wait := runner.DefaultWaitPolicy()
	wait.Timeout = cfg.LockTimeout
	// Scratch (saved plans, sensitive variable files) lives in the run dir,
	// which the next start removes if this process dies.
	ropts := []runner.Option{runner.WithWaitPolicy(wait), runner.WithRegistryProvidersOnly(), runner.WithTempDir(s.workDir),
		runner.WithCommandObserver(s.metrics.ObserveTerraform)}
	if cfg.PluginCacheDir != "" {
		ropts = append(ropts, runner.WithPluginCacheDir(cfg.PluginCacheDir))
	}
	sandbox, sandboxErr := sandboxRunnerOptions(cfg)
	s.sandboxErr = sandboxErr
	if s.runner, err = runner.New(bin, append(ropts, sandbox...)...); err != nil {
		return nil, fmt.Errorf("new server: %w", err)
	}
	logSandbox(s.log, cfg, sandboxErr, s.runner.Containment())
	logEnforcement(s.log, cfg, sandboxErr)
	if s.binaries, err = binaries(s.runner, cfg.TerraformBinaries, append(ropts, sandbox...)); err != nil {
		return nil, fmt.Errorf("new server: %w", err)
	}
	// Scratch dirs (saved plans, sensitive variables) of a killed process.
	if removed, err := s.runner.SweepScratch(); err != nil {
		s.log.WithError(err).Warn("remove leftover terraform scratch dirs")
	} else if len(removed) > 0 {
		s.log.WithField("dirs", len(removed)).Info("removed leftover terraform scratch dirs")
	}
	if s.engine, err = policy.New(); err != nil {
		return nil, fmt.Errorf("new server: %w", err)
	}
	s.rules = s.engine.Rules()
	s.metrics.SetRules(metrics.RuleIDs(s.rules))
	if err := s.wireQueues(processOwner()); err != nil {
		return nil, err
	}
	return s, nil
}

// wireQueues builds the apply queue and its scheduler, the live logs, the
// planner and the applier the handlers and the scheduler call (flows.go), the
// dispatcher of the event handlers and the intake that feeds it, the store
// health check that pauses them and the pruner; every part reports to the
// metrics. owner names this process in leases.
func (s *Server) wireQueues(owner string) (err error) {
	cfg, st := s.cfg, s.store
	s.applies = applyqueue.New(st, owner, s.applyLease(), s.now)
	s.scheduler = applyqueue.NewScheduler(s.applies, s.runApplyRedacted, s.log, applyqueue.WithMaxConcurrent(cfg.ApplyMaxConcurrent))
	s.wireLiveLogs()
	if err := s.wireNotifier(owner); err != nil {
		return err
	}
	s.wireFlows()
	s.wireDrift()
	handlers := webhook.Guard(s.limitNotices(s.handlers()), s.redact, s.metrics.JobStarted)
	if s.dispatcher, err = webhook.NewDispatcher(st, handlers, cfg.Workers, owner, s.log); err != nil {
		return err
	}
	if cfg.JobLease > 0 {
		s.dispatcher.Lease = cfg.JobLease
	}
	s.health = webhook.NewStoreHealth(st, s.log)
	s.dispatcher.Paused, s.scheduler.Paused, s.driftSched.Paused = s.health.Paused, s.health.Paused, s.health.Paused
	s.pruner = retention.New(s.applies, st, cfg.Retention, s.now, s.log)
	s.pruner.Paused = s.health.Paused
	s.dispatcher.Transient = transient
	s.dispatcher.Wait = s.githubWait
	s.dispatcher.Now = s.now
	s.dispatcher.Observe = s.metrics.ObserveJob
	s.metrics.SetEvents(s.dispatcher.Events())
	s.dispatcher.Retried = func(job *store.Job, _ error) { s.metrics.ObserveJobFailure(job.Event, true) }
	s.dispatcher.Failed = func(ctx context.Context, job *store.Job, err error) {
		s.metrics.ObserveJobFailure(job.Event, false)
		s.reportJobFailure(ctx, job, err)
	}
	delivered := slices.DeleteFunc(s.dispatcher.Events(), func(e string) bool { return slices.Contains(internalEvents, e) })
	if s.intake, err = webhook.NewIntake(cfg.WebhookSecret, st, delivered, cfg.QueueSize, s.log, s.dispatcher.Notify); err != nil {
		return err
	}
	s.intake.Observe = s.metrics.ObserveDelivery
	s.intake.Now = s.now
	s.intake.Identify = identify
	return nil
}

// openWorkDir makes this process's run directory under the configured work
// dir (default: "work" beside the store) and points checkouts at it.
func (s *Server) openWorkDir() error {
	s.baseWorkDir = s.cfg.WorkDir
	if s.baseWorkDir == "" {
		s.baseWorkDir = filepath.Join(filepath.Dir(s.cfg.StorePath), "work")
	}
	run, err := workdir.Open(s.baseWorkDir)
	if err != nil {
		return fmt.Errorf("work dir: %w", err)
	}
	s.run, s.workDir = run, run.Path()
	return nil
}

// runApplyRedacted runs an apply; its reason, which the queue stores and the
// comment shows, is redacted.
func (s *Server) runApplyRedacted(ctx context.Context, job *applyqueue.Job) (applyqueue.State, string) {
	state, reason := s.applier.RunApply(ctx, job)
	return state, s.redact.Redact(reason)
}

func (s *Server) handlers() []webhook.EventHandler {
	base := s.base()
	hs := []webhook.EventHandler{
		&PullRequest{Base: base},
		&IssueComment{Base: base},
		&CheckRun{Base: base},
		&Installation{Base: base},
		&Teams{Base: base},
		&ApplyReport{Base: base},
		&MergeGroup{Base: base},
	}
	for _, r := range s.replaced {
		hs = slices.DeleteFunc(hs, func(h webhook.EventHandler) bool {
			return slices.ContainsFunc(h.Handles(), func(e string) bool { return slices.Contains(r.Handles(), e) })
		})
	}
	return append(hs, s.replaced...)
}

// Handler is the HTTP surface the internet reaches: /webhook, /healthz and
// /readyz only. /metrics names installations, repositories and projects: it
// is served on the admin listener (AdminHandler).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/webhook", s.metrics.InstrumentWebhook(s.intake))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok\n")) })
	mux.HandleFunc("/readyz", s.health.Readyz)
	return mux
}

var errNoInstallation = errors.New("the event carries no installation id")

// binaries are the default runner's binary and those of terraform.binaries,
// each with a runner of the same options; a binary that does not run, or
// is older than the runner accepts, stops the start.
func binaries(def *runner.Runner, more []string, opts []runner.Option) (*planrun.Binaries, error) {
	id, err := runner.Identify(def.Binary())
	if err != nil {
		return nil, err
	}
	var others []planrun.Binary
	for _, path := range more {
		id, err := runner.Identify(path)
		if err != nil {
			return nil, fmt.Errorf("terraform.binaries: %w", err)
		}
		r, err := runner.New(path, opts...)
		if err != nil {
			return nil, fmt.Errorf("terraform.binaries: %w", err)
		}
		others = append(others, planrun.Binary{Identity: id, Runner: r})
	}
	return planrun.NewBinaries(planrun.Binary{Identity: id, Runner: def}, others...), nil
}
