package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/shardgate/shardgate/store"
)

func init() {
	storeCommands["migrate"] = command{summary: "apply (or --dry-run print) the PostgreSQL schema migrations", run: runStoreMigrate}
}

const storeMigrateSynopsis = "shardgate store migrate [--dry-run] (--postgres-url-env VAR | --postgres-url-file FILE)"

// migrateTimeout bounds a migration run: waiting on a replica that holds the
// migration lock forever should end in an error, not a hung deploy step.
const migrateTimeout = 5 * time.Minute

// runStoreMigrate applies the embedded migrations to a PostgreSQL store, or
// with --dry-run prints those it would apply. Exit 0 done, 2 bad usage (the
// URL never printed), 1 when the database refuses or cannot be reached.
func runStoreMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("store migrate", storeMigrateSynopsis, stderr)
	dryRun := fs.Bool("dry-run", false, "print the migrations that would be applied, change nothing")
	env := fs.String("postgres-url-env", "", "environment variable holding the database URL")
	file := fs.String("postgres-url-file", "", "file holding the database URL")
	if code := parseFlags(fs, args, stderr); code >= 0 {
		return code
	}
	if (*env == "") == (*file == "") {
		return usageError(stderr, "store migrate", "give exactly one of --postgres-url-env and --postgres-url-file")
	}
	url, err := store.PostgresURL(*file, *env, os.LookupEnv)
	if err != nil {
		return usageError(stderr, "store migrate", "%v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, migrateTimeout)
	defer cancel()
	all, err := store.Migrations()
	if err != nil {
		return migrateFailed(stderr, err)
	}
	var todo []store.Migration
	if *dryRun {
		todo, err = store.PendingMigrations(ctx, url)
	} else {
		todo, err = store.MigratePostgres(ctx, url)
	}
	if err != nil {
		return migrateFailed(stderr, err)
	}
	verb := "applied"
	if *dryRun {
		verb = "would apply"
	}
	for _, m := range todo {
		fmt.Fprintf(stdout, "-- %s %s\n%s\n", verb, m.Name, strings.TrimRight(m.SQL, "\n"))
	}
	if len(todo) == 0 {
		fmt.Fprintf(stdout, "schema is up to date at version %d: nothing to apply\n", len(all))
		return exitOK
	}
	fmt.Fprintf(stdout, "%s %d migration(s), schema version %d to %d\n", verb, len(todo), todo[0].Version-1, len(all))
	return exitOK
}

// migrateFailed reports a database error on one line and returns 1. The store's
// errors never carry the URL.
func migrateFailed(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "shardgate store migrate: %s\n", strings.ReplaceAll(err.Error(), "\n", " "))
	return exitDenied
}
