package bench

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/standmeet/standmeet/internal/adapters/riverjobs"
	"github.com/standmeet/standmeet/internal/infra/events"
	"github.com/standmeet/standmeet/internal/infra/migrate"
	"github.com/standmeet/standmeet/migrations"
)

// Options tune a run.
type Options struct {
	// AdminURL is a PostgreSQL URL whose server the bench may create
	// databases on.
	AdminURL string
	// Quick runs smaller workloads.
	Quick bool
}

// RiverSettings are the River settings the server runs with by default;
// every ceiling is measured with them.
var RiverSettings = riverjobs.Config{MaxWorkers: 200, FetchCooldown: 10 * time.Millisecond, FetchPollInterval: 50 * time.Millisecond}

// scale returns n, or n/10 in a quick run.
func (o Options) scale(n int) int {
	if o.Quick {
		return max(n/10, 1)
	}
	return n
}

// FreshDatabase drops and recreates a named database on the admin URL's
// server, migrates it, and returns its URL.
func FreshDatabase(ctx context.Context, adminURL, name string) (string, error) {
	u, err := url.Parse(adminURL)
	if err != nil {
		return "", err
	}
	maint := *u
	maint.Path = "/postgres"
	conn, err := pgx.Connect(ctx, maint.String())
	if err != nil {
		return "", fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(ctx)
	id := pgx.Identifier{name}.Sanitize()
	if _, err := conn.Exec(ctx, `DROP DATABASE IF EXISTS `+id+` WITH (FORCE)`); err != nil {
		return "", err
	}
	if _, err := conn.Exec(ctx, `CREATE DATABASE `+id); err != nil {
		return "", err
	}
	db := *u
	db.Path = "/" + name
	pool, err := pgxpool.New(ctx, db.String())
	if err != nil {
		return "", err
	}
	defer pool.Close()
	ms, err := migrate.Load(migrations.Files)
	if err != nil {
		return "", err
	}
	if _, err := migrate.Apply(ctx, pool, ms); err != nil {
		return "", err
	}
	return db.String(), nil
}

// Run runs every workload and adds its figures to r.
func Run(ctx context.Context, o Options, r *Report) error {
	for _, step := range []struct {
		name string
		run  func(context.Context, Options, *Report) error
	}{
		{"relay", runRelay},
	} {
		fmt.Printf("\n== %s\n", step.name)
		if err := step.run(ctx, o, r); err != nil {
			return fmt.Errorf("%s: %w", step.name, err)
		}
	}
	return nil
}

func runRelay(ctx context.Context, o Options, r *Report) error {
	dbURL, err := FreshDatabase(ctx, o.AdminURL, "standmeet_bench_relay")
	if err != nil {
		return err
	}
	cfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		return err
	}
	cfg.MaxConns = 20
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	res, err := events.RelayBench(ctx, pool, o.scale(20000))
	if err != nil {
		return err
	}
	r.Add(Figure{Key: "relay_events_per_s", Label: "relay: events recorded and fanned out", Unit: "/s",
		Value: res.EventsPerSec, Ceiling: "bare single-row INSERT, 8 clients", CeilingValue: res.InsertPerSec})
	r.Extra["relay_fanout_p50_ms"] = Ms(res.FanOutP50)
	r.Extra["relay_fanout_p99_ms"] = Ms(res.FanOutP99)
	r.Note("relay commit-to-fan-out p50 %.1f ms, p99 %.1f ms under load", Ms(res.FanOutP50), Ms(res.FanOutP99))
	return nil
}
