// Package testdb gives each test its own fresh, fully migrated PostgreSQL
// database, cheaply: the migrations are applied once to a template database
// named after a digest of the migration files, and every test clones it with
// CREATE DATABASE … TEMPLATE (tens of milliseconds), dropping it afterwards.
//
// The server is TEST_DATABASE_URL, else DATABASE_URL, else the private
// development cluster (scripts/devdb.sh start), which is started on demand.
package testdb

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/standmeet/standmeet/internal/adapters/postgres/uuidparam"
	"github.com/standmeet/standmeet/internal/infra/migrate"
	"github.com/standmeet/standmeet/migrations"
)

// templateLockKey serialises template creation across test processes.
const templateLockKey int64 = 0x53544d5f54504c // "STM_TPL"

var (
	serverOnce sync.Once
	serverURL  string
	serverErr  error
	tplMu      sync.Mutex
	tplReady   = map[string]bool{}
)

// ServerURL returns the URL of the PostgreSQL server tests use (its
// maintenance database), starting the private cluster when none is configured.
func ServerURL(tb testing.TB) string {
	tb.Helper()
	serverOnce.Do(func() { serverURL, serverErr = findServer() })
	if serverErr != nil {
		tb.Fatalf("testdb: %v", serverErr)
	}
	return serverURL
}

func findServer() (string, error) {
	for _, v := range []string{"TEST_DATABASE_URL", "DATABASE_URL"} {
		if u := os.Getenv(v); u != "" {
			return u, nil
		}
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	cmd := exec.Command(filepath.Join(root, "scripts", "devdb.sh"), "start")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("start the private cluster (scripts/devdb.sh start): %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}

// withDatabase returns u with its database name replaced.
func withDatabase(u, name string) (string, error) {
	parsed, err := url.Parse(u)
	if err != nil {
		return "", fmt.Errorf("parse database URL: %w", err)
	}
	parsed.Path = "/" + name
	return parsed.String(), nil
}

// TemplateName returns the name of the template database for the current
// migration files.
func TemplateName() (string, error) {
	ms, err := migrate.Load(migrations.Files)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, m := range ms {
		h.Write([]byte(m.Version))
		h.Write([]byte{0})
		h.Write([]byte(m.SQL))
		h.Write([]byte{0})
	}
	return "standmeet_tpl_" + hex.EncodeToString(h.Sum(nil))[:16], nil
}

// ensureTemplate creates and migrates the template once per migration digest.
func ensureTemplate(ctx context.Context, admin *pgx.Conn, adminURL, name string) (err error) {
	tplMu.Lock()
	defer tplMu.Unlock()
	if tplReady[name] {
		return nil
	}
	if _, err := admin.Exec(ctx, `SELECT pg_advisory_lock($1)`, templateLockKey); err != nil {
		return fmt.Errorf("lock template: %w", err)
	}
	defer func() {
		if _, unlockErr := admin.Exec(context.Background(), `SELECT pg_advisory_unlock($1)`, templateLockKey); unlockErr != nil {
			err = errors.Join(err, fmt.Errorf("unlock template: %w", unlockErr))
		}
	}()
	var isTemplate bool
	err = admin.QueryRow(ctx, `SELECT datistemplate FROM pg_database WHERE datname = $1`, name).Scan(&isTemplate)
	switch {
	case err == nil && isTemplate:
		tplReady[name] = true
		return nil
	case err == nil:
		// A half-made template from a crashed run.
		if _, err := admin.Exec(ctx, `DROP DATABASE `+pgx.Identifier{name}.Sanitize()+` WITH (FORCE)`); err != nil {
			return fmt.Errorf("drop stale template: %w", err)
		}
	case err != pgx.ErrNoRows:
		return fmt.Errorf("look up template: %w", err)
	}
	if _, err := admin.Exec(ctx, `CREATE DATABASE `+pgx.Identifier{name}.Sanitize()); err != nil {
		return fmt.Errorf("create template: %w", err)
	}
	tplURL, err := withDatabase(adminURL, name)
	if err != nil {
		return err
	}
	if err := MigrateURL(ctx, tplURL); err != nil {
		return err
	}
	if _, err := admin.Exec(ctx, `ALTER DATABASE `+pgx.Identifier{name}.Sanitize()+` WITH is_template = true`); err != nil {
		return fmt.Errorf("mark template: %w", err)
	}
	tplReady[name] = true
	return nil
}

// MigrateURL applies every migration to the database at u.
func MigrateURL(ctx context.Context, u string) error {
	pool, err := pgxpool.New(ctx, u)
	if err != nil {
		return fmt.Errorf("connect %s: %w", u, err)
	}
	defer pool.Close()
	ms, err := migrate.Load(migrations.Files)
	if err != nil {
		return err
	}
	if _, err := migrate.Apply(ctx, pool, ms); err != nil {
		return err
	}
	return nil
}

// NewURL creates a fresh, migrated database for tb and returns its URL. The
// database is dropped when the test ends.
func NewURL(tb testing.TB) string {
	tb.Helper()
	return newDatabase(tb, true)
}

// NewEmptyURL creates a fresh database with nothing in it (for schema tests)
// and returns its URL. It is dropped when the test ends.
func NewEmptyURL(tb testing.TB) string {
	tb.Helper()
	return newDatabase(tb, false)
}

func newDatabase(tb testing.TB, migrated bool) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	adminURL := ServerURL(tb)
	maint, err := withDatabase(adminURL, "postgres")
	if err != nil {
		tb.Fatalf("testdb: %v", err)
	}
	admin, err := pgx.Connect(ctx, maint)
	if err != nil {
		tb.Fatalf("testdb: connect to %s: %v", maint, err)
	}
	defer admin.Close(context.Background())
	name := "t_" + randomSuffix()
	create := `CREATE DATABASE ` + pgx.Identifier{name}.Sanitize()
	if migrated {
		tpl, err := TemplateName()
		if err != nil {
			tb.Fatalf("testdb: %v", err)
		}
		if err := ensureTemplate(ctx, admin, adminURL, tpl); err != nil {
			tb.Fatalf("testdb: template: %v", err)
		}
		create += ` TEMPLATE ` + pgx.Identifier{tpl}.Sanitize()
	}
	// Cloning a template fails while another session is connected to it;
	// nobody should be, but retry briefly in case a template is being built.
	for attempt := 0; ; attempt++ {
		_, err = admin.Exec(ctx, create)
		if err == nil || attempt == 20 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		tb.Fatalf("testdb: create database: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, maint)
		if err != nil {
			tb.Logf("testdb: drop %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, `DROP DATABASE IF EXISTS `+pgx.Identifier{name}.Sanitize()+` WITH (FORCE)`); err != nil {
			tb.Logf("testdb: drop %s: %v", name, err)
		}
	})
	u, err := withDatabase(adminURL, name)
	if err != nil {
		tb.Fatalf("testdb: %v", err)
	}
	return u
}

// New returns a pool on a fresh, migrated database of the test's own. The
// pool is closed and the database dropped when the test ends.
func New(tb testing.TB) *pgxpool.Pool {
	tb.Helper()
	u := NewURL(tb)
	cfg, err := pgxpool.ParseConfig(u)
	if err != nil {
		tb.Fatalf("testdb: %v", err)
	}
	cfg.MaxConns = 10
	// The server's pools send ids in binary (uuidparam); so do the tests'.
	cfg.AfterConnect = uuidparam.AfterConnect
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		tb.Fatalf("testdb: connect: %v", err)
	}
	// Registered after the drop, so it runs before it (cleanups are LIFO).
	tb.Cleanup(pool.Close)
	return pool
}

func randomSuffix() string {
	b := make([]byte, 8)
	rand.Read(b) // never fails: crypto/rand.Read crashes the program instead
	return hex.EncodeToString(b)
}
