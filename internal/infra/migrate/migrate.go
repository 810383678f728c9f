// Package migrate applies the numbered SQL migrations of the StandMeet server
// to PostgreSQL. Each migration runs in its own transaction, the whole run
// holds an advisory lock so replicas starting together apply each migration
// once, and schema_migrations records what has been applied.
package migrate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Migration is one numbered SQL file.
type Migration struct {
	// Version is the file name without ".sql", e.g. "0010_events".
	Version string
	// SQL is the file's text.
	SQL string
}

var migrationName = regexp.MustCompile(`^[0-9]{4}_[a-z0-9_]+\.sql$`)

// lockKey is the advisory lock key that serialises migration runs.
const lockKey int64 = 0x53544d5f4d4947 // "STM_MIG"

const createBookkeeping = `CREATE TABLE IF NOT EXISTS schema_migrations (
    version    text        PRIMARY KEY,
    applied_at timestamptz NOT NULL DEFAULT now()
)`

// Load reads the numbered migrations from fsys in order. Files that are not
// named NNNN_name.sql (schema.sql among them) are not migrations.
func Load(fsys fs.FS) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	var out []Migration
	seen := map[string]string{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !migrationName.MatchString(name) {
			continue
		}
		if prev, dup := seen[name[:4]]; dup {
			return nil, fmt.Errorf("migrations %s and %s share the number %s", prev, name, name[:4])
		}
		seen[name[:4]] = name
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", name, err)
		}
		out = append(out, Migration{Version: strings.TrimSuffix(name, ".sql"), SQL: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	if len(out) == 0 {
		return nil, errors.New("no migrations found")
	}
	return out, nil
}

// Apply applies every migration not yet recorded, in order, and returns the
// versions it applied. It is safe to call from several processes at once.
func Apply(ctx context.Context, pool *pgxpool.Pool, ms []Migration) (_ []string, err error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("acquire connection for migrations: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, lockKey); err != nil {
		return nil, fmt.Errorf("take migration lock: %w", err)
	}
	defer func() {
		// A fresh context: the caller's may be cancelled, and the lock must go.
		if _, unlockErr := conn.Exec(context.Background(), `SELECT pg_advisory_unlock($1)`, lockKey); unlockErr != nil {
			err = errors.Join(err, fmt.Errorf("release migration lock: %w", unlockErr))
		}
	}()
	if _, err := conn.Exec(ctx, createBookkeeping); err != nil {
		return nil, fmt.Errorf("create schema_migrations: %w", err)
	}
	done, err := appliedSet(ctx, conn.Conn())
	if err != nil {
		return nil, err
	}
	var applied []string
	for _, m := range ms {
		if done[m.Version] {
			continue
		}
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version) VALUES ($1)`, m.Version)
			return err
		})
		if err != nil {
			return applied, fmt.Errorf("apply migration %s: %w", m.Version, err)
		}
		applied = append(applied, m.Version)
	}
	return applied, nil
}

// Querier is what Pending needs of a pool or connection.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Pending returns the versions not yet applied. A database without
// schema_migrations has every migration pending.
func Pending(ctx context.Context, db Querier, ms []Migration) ([]string, error) {
	var exists bool
	if err := db.QueryRow(ctx, `SELECT to_regclass('schema_migrations') IS NOT NULL`).Scan(&exists); err != nil {
		return nil, fmt.Errorf("look for schema_migrations: %w", err)
	}
	done := map[string]bool{}
	if exists {
		rows, err := db.Query(ctx, `SELECT version FROM schema_migrations`)
		if err != nil {
			return nil, fmt.Errorf("read schema_migrations: %w", err)
		}
		vs, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return nil, fmt.Errorf("read schema_migrations: %w", err)
		}
		for _, v := range vs {
			done[v] = true
		}
	}
	var pending []string
	for _, m := range ms {
		if !done[m.Version] {
			pending = append(pending, m.Version)
		}
	}
	return pending, nil
}

func appliedSet(ctx context.Context, conn *pgx.Conn) (map[string]bool, error) {
	rows, err := conn.Query(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", err)
	}
	vs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", err)
	}
	done := make(map[string]bool, len(vs))
	for _, v := range vs {
		done[v] = true
	}
	return done, nil
}
