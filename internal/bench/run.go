package bench

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/standmeet/standmeet/internal/adapters/riverjob"
	"github.com/standmeet/standmeet/internal/infra/config"
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
	// Binary is the standmeet executable the server workloads run as child
	// processes; empty = built into a temporary directory.
	Binary string
	// LogDir receives the server processes' logs; empty = discarded.
	LogDir string
	// Only, when not empty, names the steps to run (relay, w5, w1, w2, …).
	Only map[string]bool
	// Budget bounds the whole run: a step that would end past it is
	// skipped with a note (0: no bound).
	Budget time.Duration
}

// RiverSettings are the River settings the server runs with by default;
// every ceiling is measured with them.
var RiverSettings = riverjob.Config{MaxWorkers: 200, FetchCooldown: 10 * time.Millisecond, FetchPollInterval: 250 * time.Millisecond}

// DefaultRiverSettings are the River settings a server started without
// STANDMEET_RIVER_* variables runs with, read from internal/infra/config's
// defaults so the ceilings follow the server when its defaults change.
func DefaultRiverSettings() riverjob.Config {
	// Load insists on a master key; any valid one does for the defaults.
	cfg, err := config.Load(func(k string) string {
		if k == "STANDMEET_MASTER_KEY" {
			return "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
		}
		return ""
	}, false)
	if err != nil {
		return RiverSettings
	}
	return riverjob.Config{
		MaxWorkers:        cfg.RiverMaxWorkers,
		FetchCooldown:     cfg.RiverFetchCooldown,
		FetchPollInterval: cfg.RiverFetchPollInterval,
		RescueAfter:       cfg.RiverRescueAfter,
	}
}

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
	if o.Binary == "" {
		root, err := ModuleRoot()
		if err != nil {
			return err
		}
		dir, err := os.MkdirTemp("", "standmeet-bench-bin")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		if o.Binary, err = BuildServer(ctx, root, dir); err != nil {
			return err
		}
	}
	// The relay step runs on the work's database before the servers start
	// (their relays would claim its events), so its figure and the publish
	// step's ceiling come from the same database as the work.
	dbURL, err := FreshDatabase(ctx, o.AdminURL, "standmeet_bench")
	if err != nil {
		return err
	}
	if o.want("relay") {
		fmt.Printf("\n== relay\n")
		if err := runRelay(ctx, o, r, dbURL); err != nil {
			return fmt.Errorf("relay: %w", err)
		}
	}
	b, err := NewServerBench(ctx, o, r, dbURL)
	if err != nil {
		return err
	}
	defer b.Close()
	// Each count waits statsSettle for PostgreSQL's counters: a quick run
	// (a smoke run) spends that time on nothing else and counts no work.
	if o.Quick {
		r.Note("no statement counts: a quick run skips them (each waits %s for PostgreSQL's counters)", statsSettle)
	} else if err := b.EnableWorkCounting(ctx); err != nil {
		r.Note("no statement counts: %v", err)
	}
	// Each step with what it costs on a 2-core machine (a durable run,
	// rounded up): a step that would end past the budget is skipped (and
	// said so), so make bench keeps its 12 minutes on a slow or busy
	// machine, while the whole run fits in about 11.
	for _, step := range []struct {
		name string
		cost time.Duration
		run  func(context.Context) error
	}{
		{"ceilings", 30 * time.Second, b.runCeilings},
		{"start", time.Second, func(ctx context.Context) error { return b.Scale(ctx, 1) }},
		{"w5", 180 * time.Second, b.runW5},
		{"w1", 70 * time.Second, b.runW1},
		{"w2", 40 * time.Second, b.runW2},
		{"reasons", 35 * time.Second, b.runReasons},
		{"filters", 45 * time.Second, b.runFilters},
		{"w3", 40 * time.Second, b.runW3},
		{"w4", 85 * time.Second, b.runW4},
		{"w4events", 55 * time.Second, b.runW4Events},
		{"publish", 15 * time.Second, b.runPublish},
		{"memory", 5 * time.Second, b.runMemory},
		{"endpoints", 20 * time.Second, b.runManyEndpoints},
		{"replicas1", 40 * time.Second, func(ctx context.Context) error { return b.runReplicas(ctx, 1) }},
		{"replicas2", 45 * time.Second, func(ctx context.Context) error { return b.runReplicas(ctx, 2) }},
		{"replicas3", 45 * time.Second, func(ctx context.Context) error { return b.runReplicas(ctx, 3) }},
	} {
		if !o.want(step.name) {
			continue
		}
		if o.Budget > 0 && !o.Quick && time.Since(r.Started)+step.cost > o.Budget {
			r.Note("SKIPPED %s: %s spent, it would end past the %s budget", step.name, time.Since(r.Started).Round(time.Second), o.Budget)
			continue
		}
		fmt.Printf("\n== %s\n", step.name)
		t0 := time.Now()
		if err := step.run(ctx); err != nil {
			return fmt.Errorf("%s: %w", step.name, err)
		}
		fmt.Printf("  (%s)\n", time.Since(t0).Round(100*time.Millisecond))
	}
	if p := b.Problems(); len(p) > 0 {
		return fmt.Errorf("%d problem(s): %s", len(p), strings.Join(p, "; "))
	}
	return nil
}

// want reports whether a step runs: always, unless Only names others. The
// ceilings and the first server are prerequisites of every server step.
func (o Options) want(step string) bool {
	if len(o.Only) == 0 || o.Only[step] {
		return true
	}
	switch step {
	case "ceilings", "start":
		return !o.Only["relay"] || len(o.Only) > 1
	case "w2":
		return o.Only["endpoints"] || o.Only["replicas"]
	case "replicas1", "replicas2", "replicas3":
		return o.Only["replicas"]
	}
	return false
}

// runRelay measures the relay and its ceiling (a bare single-row INSERT,
// the same clients) on the database at dbURL, and removes its events and
// jobs afterwards.
func runRelay(ctx context.Context, o Options, r *Report, dbURL string) error {
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
	res, err := relayBench(ctx, pool, o.scale(20000))
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
