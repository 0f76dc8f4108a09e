package store

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// migrationFS holds the schema, one numbered file per change. A file is
// never edited once released: a change is a new file (the checksums recorded
// in schema_migrations refuse an edited one).
//
//go:embed migrations/*.sql
var migrationFS embed.FS

// Migration is one embedded schema change.
type Migration struct {
	Version int    // from the file name's number; applied in this order
	Name    string // the file name, such as 0001_jobs.sql
	SQL     string
}

func (m Migration) checksum() string {
	sum := sha256.Sum256([]byte(m.SQL))
	return hex.EncodeToString(sum[:])
}

var migrationName = regexp.MustCompile(`^([0-9]{4})_[a-z0-9_]+\.sql$`)

// Migrations returns the embedded migrations in version order. Versions run
// 1, 2, 3… without gaps, so a missing file cannot go unnoticed.
func Migrations() ([]Migration, error) {
	entries, err := fs.ReadDir(migrationFS, "migrations")
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	var out []Migration
	for _, e := range entries {
		m := migrationName.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("read migrations: %q is not named NNNN_name.sql", e.Name())
		}
		v, _ := strconv.Atoi(m[1]) // four digits: cannot fail
		body, err := migrationFS.ReadFile("migrations/" + e.Name())
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", e.Name(), err)
		}
		out = append(out, Migration{Version: v, Name: e.Name(), SQL: string(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i, m := range out {
		if m.Version != i+1 {
			return nil, fmt.Errorf("read migrations: %s should be version %d", m.Name, i+1)
		}
	}
	return out, nil
}

// lockMigrate is the migration lock's advisory key, as (schema hash, 1): per
// schema, so two deployments sharing a database in different schemas never
// wait on each other. enqueue_job's queue lock is (schema hash, 2).
const lockMigrate = 1

const lockSQL = `SELECT pg_advisory_xact_lock(hashtext('shardgate:' || current_schema()), $1)`

const createMigrationsTable = `CREATE TABLE IF NOT EXISTS schema_migrations (
	version    integer PRIMARY KEY,
	name       text NOT NULL,
	checksum   text NOT NULL,
	applied_at timestamptz NOT NULL DEFAULT now()
)`

// appliedMigration is one row of schema_migrations.
type appliedMigration struct {
	version        int
	name, checksum string
}

// MigratePostgres applies the migrations the database at url lacks and
// returns them (none when it is up to date). OpenPostgres does the same.
func MigratePostgres(ctx context.Context, url string) ([]Migration, error) {
	pool, err := connectPostgres(ctx, url)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	return migrate(ctx, pool)
}

// PendingMigrations returns the migrations MigratePostgres would apply to
// the database at url, changing nothing.
func PendingMigrations(ctx context.Context, url string) ([]Migration, error) {
	pool, err := connectPostgres(ctx, url)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	var pending []Migration
	err = pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if err := checkSchemaSelected(ctx, tx); err != nil {
			return err
		}
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT to_regclass('schema_migrations') IS NOT NULL`).Scan(&exists); err != nil {
			return fmt.Errorf("look for schema_migrations: %w", err)
		}
		var applied []appliedMigration
		if exists {
			if applied, err = readApplied(ctx, tx); err != nil {
				return err
			}
		}
		pending, err = pendingOf(applied)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list pending migrations: %w", err)
	}
	return pending, nil
}

// migrate applies the missing migrations in one transaction under an
// advisory lock: replicas starting at once wait for the first, then find
// nothing left to do; a failed migration leaves the schema as it was.
func migrate(ctx context.Context, pool *pgxpool.Pool) ([]Migration, error) {
	var pending []Migration
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if err := checkSchemaSelected(ctx, tx); err != nil {
			return err
		}
		// The lock first: CREATE TABLE IF NOT EXISTS is not safe against a
		// concurrent create of the same table.
		if _, err := tx.Exec(ctx, lockSQL, lockMigrate); err != nil {
			return fmt.Errorf("lock schema: %w", err)
		}
		if _, err := tx.Exec(ctx, createMigrationsTable); err != nil {
			return fmt.Errorf("create schema_migrations: %w", err)
		}
		applied, err := readApplied(ctx, tx)
		if err != nil {
			return err
		}
		if pending, err = pendingOf(applied); err != nil {
			return err
		}
		for _, m := range pending {
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return fmt.Errorf("apply %s: %w", m.Name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)`,
				m.Version, m.Name, m.checksum()); err != nil {
				return fmt.Errorf("record %s: %w", m.Name, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("migrate schema: %w", err)
	}
	return pending, nil
}

// checkSchemaSelected turns PostgreSQL's "no schema has been selected to
// create in" into the setting to fix.
func checkSchemaSelected(ctx context.Context, tx pgx.Tx) error {
	var schema *string
	if err := tx.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return fmt.Errorf("read current schema: %w", err)
	}
	if schema == nil {
		return errors.New("the search_path names no existing schema (create it, or fix search_path in the URL)")
	}
	return nil
}

func readApplied(ctx context.Context, tx pgx.Tx) ([]appliedMigration, error) {
	rows, err := tx.Query(ctx, `SELECT version, name, checksum FROM schema_migrations ORDER BY version`)
	if err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (appliedMigration, error) {
		var a appliedMigration
		err := r.Scan(&a.version, &a.name, &a.checksum)
		return a, err
	})
	if err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", err)
	}
	return out, nil
}

// pendingOf compares what the database recorded with what this binary
// embeds. A database ahead of the binary, or one whose applied migration
// differs from the embedded file, is refused: this shardgate cannot know what
// that schema means.
func pendingOf(applied []appliedMigration) ([]Migration, error) {
	all, err := Migrations()
	if err != nil {
		return nil, err
	}
	done := map[int]bool{}
	for _, a := range applied {
		if a.version < 1 {
			return nil, fmt.Errorf("the database schema has migration %d (%s), which no shardgate writes", a.version, a.name)
		}
		if a.version > len(all) {
			return nil, fmt.Errorf("the database schema has migration %d (%s), newer than this shardgate's %d: run a newer shardgate",
				a.version, a.name, len(all))
		}
		m := all[a.version-1]
		if a.checksum != m.checksum() {
			return nil, fmt.Errorf("migration %d was applied as %s with checksum %.12s, but this shardgate's %s has %.12s",
				a.version, a.name, a.checksum, m.Name, m.checksum())
		}
		done[a.version] = true
	}
	var pending []Migration
	for _, m := range all {
		if !done[m.Version] {
			pending = append(pending, m)
		}
	}
	return pending, nil
}
