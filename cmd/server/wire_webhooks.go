package main

// Outbound webhooks: the endpoint ops, the fan-out and
// delivery workers, the delivery lanes and the relay subscription.

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"runtime/debug"
	"time"

	"github.com/google/wire"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/standmeet/standmeet/internal/access"
	"github.com/standmeet/standmeet/internal/adapters/postgres/uow"
	"github.com/standmeet/standmeet/internal/adapters/postgres/webhookdb"
	"github.com/standmeet/standmeet/internal/adapters/riverjob"
	"github.com/standmeet/standmeet/internal/adapters/webhookhttp"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/infra/config"
	"github.com/standmeet/standmeet/internal/infra/httpx"
	"github.com/standmeet/standmeet/internal/owner/webhook"
	"github.com/standmeet/standmeet/internal/owner/webhook/delivery"
)

// WebhookSet provides outbound webhooks: the endpoint ops, fan-out and
// delivery, their workers and the delivery lanes.
var WebhookSet = wire.NewSet(
	provideWebhookUnitOfWork,
	provideWebhookService,
	provideWebhookOps,
	provideWebhookStore,
	provideWebhookPoster,
	provideWebhookFanouter,
	provideWebhookDeliverer,
	wire.Struct(new(riverjob.WebhookFanoutWorker), "Fanouter"),
	provideWebhookDeliverWorker,
	provideWebhookPruneWorker,
	provideWebhookLanes,
	provideWebhookHealth,
	provideEmbedAdmits,
	provideEmbedBelongsTo,
)

// webhookOps are the webhooks.* ops (a named type so Wire tells the op
// lists apart).
type webhookOps op.Set

// webhookFanoutSubscriber subscribes webhook.fanout to every Webhook-exposed
// type; subscriptionsOf expands the glob against the catalog. The relay
// queues a fan-out only for the events of owners with an endpoint.
func webhookFanoutSubscriber() subscriber {
	exposure := domain.Webhook
	return subscriber{Kind: delivery.KindFanout, Globs: []string{"*"}, Exposure: &exposure, Owners: webhookdb.OwnersWithEndpoints}
}

func provideWebhookUnitOfWork(pool *pgxpool.Pool, rec uow.Recorder, ins *riverjob.Inserter) *uow.UnitOfWork[webhook.Tx] {
	return webhookdb.NewUnitOfWork(pool, rec, ins)
}

func provideWebhookService(uow *uow.UnitOfWork[webhook.Tx], seal webhook.SealFunc, belongs webhook.EmbedBelongsToFunc, admits delivery.EmbedAdmitsFunc,
	cfg config.Config, health *webhookdb.HealthReader, pool *pgxpool.Pool) *webhook.Service {
	return webhook.NewService(webhook.Deps{UnitOfWork: uow, Seal: seal, EmbedBelongsTo: belongs, EmbedAdmits: admits, MaxEndpoints: cfg.WebhookMaxEndpoints,
		Health: health, Stats: health, Egress: webhookEgressCheck(cfg), Fanouts: webhookdb.NewFanoutReader(pool),
		Version: buildVersion()})
}

// provideWebhookHealth reads the endpoints' recent outcomes for the list,
// and registers on /metrics the endpoint and delivery state gauges, read
// from the database at each scrape.
func provideWebhookHealth(pool *pgxpool.Pool, reg *prometheus.Registry, logger *zap.Logger) (*webhookdb.HealthReader, error) {
	if err := reg.Register(webhookdb.NewStateCollector(pool, logger.Named("webhooks"))); err != nil {
		return nil, fmt.Errorf("register webhook state metrics: %w", err)
	}
	return webhookdb.NewHealthReader(pool), nil
}

func provideWebhookOps(svc *webhook.Service) webhookOps { return webhookOps(svc.Ops()) }

func provideWebhookPoster(cfg config.Config) *webhookhttp.Poster {
	return webhookhttp.New(webhookhttp.Options{Allow: cfg.EgressAllow, Concurrency: cfg.RiverMaxWorkers})
}

func provideWebhookFanouter(store *webhookdb.Store, admits delivery.EmbedAdmitsFunc, cfg config.Config) *delivery.Fanouter {
	return delivery.NewFanouter(delivery.FanoutDeps{Store: store, EmbedAdmits: admits, BackoffScale: cfg.WebhookBackoffScale})
}

// provideWebhookDeliverer builds the deliverer, exports its attempts
// (webhookhttp.Signals: outcomes, latency, a warn line per failure) and its
// counters on /metrics as standmeet_webhook_flow_*: snoozes_total, handoffs_total,
// wakes_total, in_flight and waiting (this process).
func provideWebhookDeliverer(store *webhookdb.Store, poster *webhookhttp.Poster, unseal delivery.UnsealFunc,
	admits delivery.EmbedAdmitsFunc, cfg config.Config, reg *prometheus.Registry, logger *zap.Logger) (*delivery.Deliverer, error) {
	// The endpoint the deliverer reads (TakeLease) is where
	// per-endpoint delivery settings (timeout, attempts) reach it.
	signals, err := webhookhttp.NewSignals(reg, logger.Named("webhooks"))
	if err != nil {
		return nil, err
	}
	d := delivery.NewDeliverer(delivery.DeliverDeps{
		Store: store, Poster: poster, Unseal: unseal, EmbedAdmits: admits, Version: buildVersion(), Observe: signals.Observe,
		BackoffScale: cfg.WebhookBackoffScale,
	})
	opts := func(name, help string) prometheus.Opts {
		return prometheus.Opts{Namespace: "standmeet", Subsystem: "webhook_flow", Name: name, Help: help}
	}
	for _, c := range []prometheus.Collector{
		prometheus.NewCounterFunc(prometheus.CounterOpts(opts("snoozes_total", "Deliveries that snoozed because their endpoint stayed busy.")),
			func() float64 { return float64(d.Stats().BusySnoozes) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts(opts("wakes_total", "Snoozed deliveries made available again when the busy line they left emptied.")),
			func() float64 { return float64(d.Stats().Wakes) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts(opts("handoffs_total", "Leases passed from a finishing delivery to one waiting in this process.")),
			func() float64 { return float64(d.Stats().Handoffs) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts(opts("in_flight", "Lease slots this process holds.")),
			func() float64 { return float64(d.Stats().InFlight) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts(opts("waiting", "Deliveries waiting in this process for a busy endpoint's lease.")),
			func() float64 { return float64(d.Stats().Waiting) }),
	} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register webhook flow metrics: %w", err)
		}
	}
	return d, nil
}

func provideWebhookDeliverWorker(d *delivery.Deliverer, cfg config.Config, logger *zap.Logger) *riverjob.WebhookDeliverWorker {
	return &riverjob.WebhookDeliverWorker{Deliverer: d, BackoffScale: cfg.WebhookBackoffScale, Logger: logger.Named("webhooks")}
}

// provideWebhookStore opens the delivery store, which closes the pool of
// its own at shutdown.
func provideWebhookStore(pool *pgxpool.Pool, ins *riverjob.Inserter, rec uow.Recorder) (*webhookdb.Store, func(), error) {
	s, err := webhookdb.NewStore(pool, ins)
	if err != nil {
		return nil, nil, err
	}
	s.RecordHealthWith(rec)
	return s, s.Close, nil
}

// provideWebhookPruneWorker prunes the delivery log and purges the endpoints
// deleted before the retention's cutoff (with their remaining log).
func provideWebhookPruneWorker(store *webhookdb.Store, pool *pgxpool.Pool) *riverjob.WebhookPruneWorker {
	return &riverjob.WebhookPruneWorker{PruneFunc: func(ctx context.Context, before time.Time) (int64, error) {
		n, err := store.PruneAttempts(ctx, before)
		if err != nil {
			return n, err
		}
		m, err := webhookdb.PurgeDeletedEndpoints(ctx, pool, before)
		return n + m, err
	}}
}

// provideWebhookLanes gives this process its delivery lane, a River queue
// worked here, before River starts, unless STANDMEET_WEBHOOK_LANES is false.
func provideWebhookLanes(cfg config.Config, store *webhookdb.Store, w *riverjob.Worker, logger *zap.Logger) (*webhookdb.Lanes, error) {
	return webhookdb.NewLanes(store, w, cfg.WebhookLanes, logger.Named("webhooks"))
}

// provideEmbedAdmits hands the subscriber the access domain's scope check,
// asked afresh for every event.
func provideEmbedAdmits(s *access.Service) delivery.EmbedAdmitsFunc { return s.EmbedAdmits }

// provideEmbedBelongsTo hands the endpoint ops the access domain's
// ownership check of embeds.
func provideEmbedBelongsTo(s *access.Service) webhook.EmbedBelongsToFunc { return s.EmbedBelongsTo }

// version is set at link time by `make build` (-X main.version=, from git
// describe); empty for `go build`, `go run` and tests.
var version string

// buildVersion is the linked version, else the module version stamped by
// the Go toolchain, else "dev". It names the server in the webhooks'
// User-Agent, MCP and OpenAPI.
func buildVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// webhookEgressCheck hands the webhooks domain the delivery client's egress
// policy (httpx.CheckAddr with STANDMEET_EGRESS_ALLOW), so a URL the client
// would refuse to dial is refused when it is registered.
func webhookEgressCheck(cfg config.Config) webhook.EgressCheckFunc {
	return func(ip netip.Addr) error {
		var blocked *httpx.BlockedError
		if err := httpx.CheckAddr(ip, cfg.EgressAllow); errors.As(err, &blocked) {
			return errors.New(blocked.Reason)
		} else if err != nil {
			return err
		}
		return nil
	}
}
