package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/shardgate/shardgate/bot"
	"github.com/shardgate/shardgate/bot/server/serverconfig"
	"github.com/shardgate/shardgate/internal/logctx"
	"github.com/shardgate/shardgate/store"
)

func init() {
	register("serve", command{summary: "run the GitHub App webhook service", run: runServe})
}

const serveSynopsis = "shardgate serve --config FILE"

// shutdownGrace is how long running jobs get to finish on SIGTERM before they
// are handed back to the queue for the next start.
const shutdownGrace = 30 * time.Second

// runServe serves webhooks until SIGINT/SIGTERM, then exits 0. Exit 2 when it
// cannot start: a bad configuration (every problem listed), a store it cannot
// open, a listener it cannot bind or serve TLS on. Exit 1 when the service
// fails after it started serving.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("serve", serveSynopsis, stderr)
	configPath := fs.String("config", "", "server configuration file (YAML, version: 1)")
	if code := parseFlags(fs, args, stderr); code >= 0 {
		return code
	}
	if *configPath == "" {
		return usageError(stderr, "serve", "--config is required (run 'shardgate serve --help')")
	}
	cfg, err := serverconfig.Load(*configPath, os.LookupEnv)
	if err != nil {
		return usageError(stderr, "serve", "%v", err)
	}
	st, code := openServeStore(ctx, cfg, stderr)
	if st == nil {
		return code
	}
	defer st.Close()
	log := logctx.NewLogger(stderr, logrus.InfoLevel)
	srv, err := bot.New(cfg, st, bot.WithLogEntry(log), bot.WithOnListening(func(addr net.Addr) {
		fmt.Fprintf(stdout, "shardgate serving on %s\n", addr)
	}))
	if err != nil {
		return usageError(stderr, "serve", "%v", err)
	}
	if err := srv.Run(ctx, shutdownGrace); err != nil {
		if !failedWhileServing(err) {
			return usageError(stderr, "serve", "%v", err)
		}
		fmt.Fprintf(stderr, "shardgate serve: %v\n", err)
		return exitFailed
	}
	return exitOK
}

// openServeStore opens the configured store: the bbolt file, or the
// PostgreSQL database, migrated (under the migration lock, so replicas
// starting together migrate once). On failure it reports and returns nil
// and the exit code: 2 for a store that cannot be opened as configured, 1
// for a database that cannot be reached. The URL never shows: the store's
// errors leave it out, and the configuration's redactor takes any of it.
func openServeStore(ctx context.Context, cfg *serverconfig.Config, stderr io.Writer) (store.Store, int) {
	if !cfg.OnPostgres() {
		st, err := store.OpenBolt(cfg.StorePath)
		if err != nil {
			return nil, usageError(stderr, "serve", "%v", err)
		}
		return st, exitOK
	}
	octx, cancel := context.WithTimeout(ctx, migrateTimeout)
	defer cancel()
	st, err := store.OpenPostgres(octx, cfg.PostgresURL.Reveal(), store.WithLease(cfg.JobLease))
	if err != nil {
		fmt.Fprintf(stderr, "shardgate serve: %s\n", cfg.Redactor().Redact(err.Error()))
		return nil, exitFailed
	}
	return st, exitOK
}

// failedWhileServing tells a failure of the running service (its listener
// stopped accepting) from one before it served: everything else Run returns
// comes from starting (workers, admin listener, listen, TLS certificates).
func failedWhileServing(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "accept"
}
