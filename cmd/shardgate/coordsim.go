package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/shardgate/shardgate/coord/coordsim"
)

const coordsimSynopsis = "shardgate coordsim --listen ADDR [--audit-log FILE] [--members-per-group N] [--tick DURATION] [--user NAME:PASSWORD:ROLE[,ROLE]]..."

// coordsimShutdownTimeout bounds the graceful shutdown after SIGINT/SIGTERM.
const coordsimShutdownTimeout = 5 * time.Second

func init() {
	register("coordsim", command{
		summary: "serve a simulated Redis Stream Coordinator (for tests and demos)",
		run:     runCoordsim,
	})
}

func runCoordsim(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("coordsim", coordsimSynopsis, stderr)
	listen := fs.String("listen", "", "address to listen on, e.g. 127.0.0.1:8089 (required)")
	auditLog := fs.String("audit-log", "", "append one JSON audit event per mutation to this file")
	members := fs.Int("members-per-group", coordsim.DefaultMembersPerGroup, "simulated live members of each created group (0 allowed)")
	tick := fs.Duration("tick", time.Second, "event-loop tick: members heartbeat and migrations advance once per tick")
	var users stringList
	fs.Var(&users, "user", "API user NAME:PASSWORD:ROLE[,ROLE] (repeatable; roles READ, WRITE, ADMIN, MONITOR, MEMBER; default admin/password with every role)")
	if code := parseFlags(fs, args, stderr); code >= 0 {
		return code
	}
	if *listen == "" {
		return usageError(stderr, "coordsim", "--listen is required")
	}
	if *members < 0 {
		return usageError(stderr, "coordsim", "--members-per-group must be 0 or more, got %d", *members)
	}
	if *tick <= 0 {
		return usageError(stderr, "coordsim", "--tick must be positive, got %s", *tick)
	}
	opts := []coordsim.Option{coordsim.WithMembersPerGroup(*members)}
	var parsed []coordsim.User
	for _, v := range users {
		u, err := coordsim.ParseUser(v)
		if err != nil {
			// The value holds a password: name only the problem.
			return usageError(stderr, "coordsim", "bad --user value: %v", err)
		}
		parsed = append(parsed, u)
	}
	opts = append(opts, coordsim.WithUsers(parsed...))
	if *auditLog != "" {
		f, err := os.OpenFile(*auditLog, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			fmt.Fprintf(stderr, "shardgate coordsim: open audit log: %v\n", err)
			return 1
		}
		defer f.Close()
		opts = append(opts, coordsim.WithAuditWriter(f))
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintf(stderr, "shardgate coordsim: listen: %v\n", err)
		return 1
	}
	sim := coordsim.New(opts...)
	srv := &http.Server{Handler: sim, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdout, "coordsim listening on http://%s\n", ln.Addr())

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go sim.Run(runCtx, *tick)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		fmt.Fprintf(stderr, "shardgate coordsim: serve: %v\n", err)
		return 1
	case <-ctx.Done():
	}
	sctx, scancel := context.WithTimeout(context.Background(), coordsimShutdownTimeout)
	defer scancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(stderr, "shardgate coordsim: shut down: %v\n", err)
		return 1
	}
	return exitOK
}
