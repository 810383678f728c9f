package main

// Infrastructure: the PostgreSQL pool, the migrations, the Prometheus
// registry and /metrics, River's client and UI, and jobs.get.

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/google/wire"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"
	"go.uber.org/zap/zapcore"
	"riverqueue.com/riverui"

	"github.com/standmeet/standmeet/internal/adapters/postgres/uuidparam"
	"github.com/standmeet/standmeet/internal/adapters/riverjob"
	"github.com/standmeet/standmeet/internal/adapters/web"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/infra/config"
	"github.com/standmeet/standmeet/internal/infra/migrate"
	"github.com/standmeet/standmeet/migrations"
)

// InfraSet provides what every domain builds on. The registry is also the
// prometheus.Registerer the parts register their collectors with.
var InfraSet = wire.NewSet(
	providePool,
	provideMigrations,
	provideRegistry,
	wire.Bind(new(prometheus.Registerer), new(*prometheus.Registry)),
	provideMetricsHandler,
	provideRiverConfig,
	riverjob.NewWorker,
	provideTasksHandler,
	provideJobOps,
)

func providePool(ctx context.Context, cfg config.Config) (*pgxpool.Pool, func(), error) {
	pcfg, err := pgxpool.ParseConfig(cfg.DatabaseURL)
	if err != nil {
		return nil, nil, &config.Error{Var: "DATABASE_URL", Reason: err.Error()}
	}
	// A pool_max_conns in the URL wins; otherwise the configured size.
	if !strings.Contains(cfg.DatabaseURL, "pool_max_conns") {
		pcfg.MaxConns = int32(cfg.DBMaxConns)
	}
	pcfg.AfterConnect = uuidparam.AfterConnect
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, nil, &config.Error{Var: "DATABASE_URL", Reason: err.Error()}
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Ping(pctx); err != nil {
		pool.Close()
		return nil, nil, &config.Error{Var: "DATABASE_URL", Reason: fmt.Sprintf("cannot reach the database: %v", err)}
	}
	return pool, pool.Close, nil
}

func provideMigrations() ([]migrate.Migration, error) {
	return migrate.Load(migrations.Files)
}

func provideRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// metricsHandler serves /metrics.
type metricsHandler http.Handler

func provideMetricsHandler(reg *prometheus.Registry) metricsHandler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg})
}

func provideRiverConfig(cfg config.Config) riverjob.Config {
	return riverjob.Config{
		MaxWorkers:        cfg.RiverMaxWorkers,
		FetchCooldown:     cfg.RiverFetchCooldown,
		FetchPollInterval: cfg.RiverFetchPollInterval,
		RescueAfter:       cfg.RiverRescueAfter,
		Retention:         cfg.EventRetention,
		PoolSize:          cfg.DBMaxConns,
	}
}

// tasksHandler serves River's UI.
type tasksHandler http.Handler

func provideTasksHandler(ctx context.Context, w *riverjob.Worker, logger *zap.Logger) (tasksHandler, error) {
	h, err := riverui.NewHandler(&riverui.HandlerOpts{
		Endpoints: riverui.NewEndpoints(w.Client, nil),
		Logger:    riverjobLogger(logger),
		Prefix:    "/admin/tasks",
	})
	if err != nil {
		return nil, fmt.Errorf("build river ui: %w", err)
	}
	// River UI's background counts scan river_job every few seconds; a
	// process starts them only once its River UI is opened.
	start := func() error { return h.Start(ctx) }
	failed := func(err error) {
		logger.Error("start river ui; serving it without its background counts", zap.Error(err))
	}
	// River UI's page carries a link back to the admin.
	return web.BackLink(web.StartOnFirstRequest(h, start, failed)), nil
}

// jobOps is jobs.get, every owner's view of their own jobs (River's UI is
// the operator's).
type jobOps op.Set

func provideJobOps(w *riverjob.Worker, pool *pgxpool.Pool) jobOps {
	return jobOps(riverjob.JobOps(w.Client, pool))
}

func riverjobLogger(l *zap.Logger) *slog.Logger {
	core, err := zapcore.NewIncreaseLevelCore(l.Named("riverui").Core(), zapcore.WarnLevel)
	if err != nil {
		core = l.Core()
	}
	return slog.New(zapslog.NewHandler(core))
}
