package main

// Outbound webhooks (seed 002, issue 6): the endpoint ops, the fan-out and
// delivery workers, the lease listener and the relay subscription.

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"runtime/debug"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/standmeet/standmeet/internal/access"
	pgwebhooks "github.com/standmeet/standmeet/internal/adapters/postgres/webhooks"
	"github.com/standmeet/standmeet/internal/adapters/riverjobs"
	"github.com/standmeet/standmeet/internal/adapters/webhookhttp"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/infra/config"
	"github.com/standmeet/standmeet/internal/infra/events"
	"github.com/standmeet/standmeet/internal/infra/httpx"
	whsub "github.com/standmeet/standmeet/internal/owner/subscriber"
	"github.com/standmeet/standmeet/internal/owner/webhooks"
)

// webhookOps are the webhooks.* ops (a named type so Wire tells the op
// lists apart).
type webhookOps op.Set

// webhookFanoutSubscriber subscribes webhook.fanout to every Webhook-exposed
// type; subscriptionsOf expands the glob against the catalog.
func webhookFanoutSubscriber() subscriber {
	exposure := domain.Webhook
	return subscriber{Kind: whsub.KindFanout, Globs: []string{"*"}, Exposure: &exposure}
}

func provideWebhookUnitOfWork(pool *pgxpool.Pool, rec *events.Recorder, ins *riverjobs.Inserter) *pgwebhooks.UnitOfWork {
	return pgwebhooks.NewUnitOfWork(pool, func(tx pgx.Tx) domain.Recorder { return rec.With(tx) }, ins)
}

func provideWebhookService(uow *pgwebhooks.UnitOfWork, seal webhooks.SealFunc, belongs webhooks.EmbedBelongsToFunc, cfg config.Config,
	health *pgwebhooks.HealthReader) *webhooks.Service {
	return webhooks.NewService(webhooks.Deps{UnitOfWork: uow, Seal: seal, EmbedBelongsTo: belongs, MaxEndpoints: cfg.WebhookMaxEndpoints,
		Health: health, Egress: webhookEgressCheck(cfg)})
}

// provideWebhookHealth reads the endpoints' recent outcomes for the list,
// and registers on /metrics the endpoint and delivery state gauges, read
// from the database at each scrape.
func provideWebhookHealth(pool *pgxpool.Pool, reg *prometheus.Registry, logger *zap.Logger) (*pgwebhooks.HealthReader, error) {
	if err := reg.Register(pgwebhooks.NewStateCollector(pool, logger.Named("webhooks"))); err != nil {
		return nil, fmt.Errorf("register webhook state metrics: %w", err)
	}
	return pgwebhooks.NewHealthReader(pool), nil
}

func provideWebhookOps(svc *webhooks.Service) webhookOps { return webhookOps(svc.Ops()) }

func provideWebhookStore(pool *pgxpool.Pool, ins *riverjobs.Inserter) *pgwebhooks.Store {
	return pgwebhooks.NewStore(pool, ins)
}

// provideWebhookFlow bounds the deliveries waiting in process for a busy
// endpoint to half the River workers (64 per endpoint: a tenth of a second
// of a fast receiver, longer than River takes to bring the next ones), so
// waiting never starves the
// other endpoints.
// Its counters are exported on /metrics, so a burst's behaviour can be read
// while it runs.
func provideWebhookFlow(cfg config.Config, reg *prometheus.Registry) (*whsub.Flow, error) {
	flow := whsub.NewFlow(whsub.FlowOptions{DeckPerEndpoint: 64, DeckTotal: max(cfg.RiverMaxWorkers/2, 1)})
	counter := func(name, help string, get func(whsub.FlowStats) float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{
			Namespace: "standmeet", Subsystem: "webhook_flow", Name: name, Help: help,
		}, func() float64 { return get(flow.Stats()) })
	}
	gauge := func(name, help string, get func(whsub.FlowGauges) int) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: "standmeet", Subsystem: "webhook_flow", Name: name, Help: help,
		}, func() float64 { return float64(get(flow.Gauges())) })
	}
	for _, c := range []prometheus.Collector{
		counter("snoozes_total", "Deliveries that found their endpoint busy and snoozed.", func(s whsub.FlowStats) float64 { return float64(s.Snoozes) }),
		counter("deck_joins_total", "Waits in process for a busy endpoint's lease.", func(s whsub.FlowStats) float64 { return float64(s.DeckJoins) }),
		counter("deck_timeouts_total", "Waits that ended without the lease.", func(s whsub.FlowStats) float64 { return float64(s.DeckTimeouts) }),
		counter("pulls_total", "Parked deliveries made available early by the chain.", func(s whsub.FlowStats) float64 { return float64(s.Pulls) }),
		counter("deferred_total", "Deliveries the fan-out queued behind an endpoint's backlog.", func(s whsub.FlowStats) float64 { return float64(s.Deferred) }),
		counter("releases_total", "Leases released by this process.", func(s whsub.FlowStats) float64 { return float64(s.Releases) }),
		counter("handoffs_total", "Leases passed straight from a holder to a waiter.", func(s whsub.FlowStats) float64 { return float64(s.Handoffs) }),
		counter("hold_seconds_total", "Time leases were held by this process.", func(s whsub.FlowStats) float64 { return s.Hold.Seconds() }),
		gauge("in_flight", "Lease slots this process holds now.", func(g whsub.FlowGauges) int { return g.InFlight }),
		gauge("waiting", "Deliveries waiting in process for a busy endpoint's lease.", func(g whsub.FlowGauges) int { return g.Waiting }),
		gauge("pulled", "Parked deliveries made available early and not yet running.", func(g whsub.FlowGauges) int { return g.Pulled }),
		gauge("parked", "Deliveries parked behind a busy endpoint, as this process knows them.", func(g whsub.FlowGauges) int { return g.Parked }),
	} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register webhook flow metrics: %w", err)
		}
	}
	return flow, nil
}

func provideWebhookPoster(cfg config.Config) *webhookhttp.Poster {
	return webhookhttp.New(webhookhttp.Options{Allow: cfg.EgressAllow})
}

func provideWebhookFanouter(store *pgwebhooks.Store, admits whsub.EmbedAdmitsFunc, flow *whsub.Flow, cfg config.Config) *whsub.Fanouter {
	return whsub.NewFanouter(whsub.FanoutDeps{Store: store, EmbedAdmits: admits, Flow: flow, BackoffScale: cfg.WebhookBackoffScale})
}

func provideWebhookDeliverer(store *pgwebhooks.Store, poster *webhookhttp.Poster, unseal whsub.UnsealFunc,
	admits whsub.EmbedAdmitsFunc, flow *whsub.Flow) *whsub.Deliverer {
	return whsub.NewDeliverer(whsub.DeliverDeps{
		Store: store, Poster: poster, Unseal: unseal, EmbedAdmits: admits, Flow: flow, Version: buildVersion(),
	})
}

func provideWebhookFanoutWorker(f *whsub.Fanouter) *riverjobs.WebhookFanoutWorker {
	return &riverjobs.WebhookFanoutWorker{Fanouter: f}
}

func provideWebhookDeliverWorker(d *whsub.Deliverer, cfg config.Config, logger *zap.Logger) *riverjobs.WebhookDeliverWorker {
	return &riverjobs.WebhookDeliverWorker{Deliverer: d, BackoffScale: cfg.WebhookBackoffScale, Logger: logger.Named("webhooks")}
}

// provideWebhookPruneWorker prunes the delivery log and purges the endpoints
// deleted before the retention's cutoff (with their remaining log).
func provideWebhookPruneWorker(store *pgwebhooks.Store, pool *pgxpool.Pool) *riverjobs.WebhookPruneWorker {
	return &riverjobs.WebhookPruneWorker{PruneFunc: func(ctx context.Context, before time.Time) (int64, error) {
		n, err := store.PruneAttempts(ctx, before)
		if err != nil {
			return n, err
		}
		m, err := pgwebhooks.PurgeDeletedEndpoints(ctx, pool, before)
		return n + m, err
	}}
}

func provideWebhookLeaseListener(store *pgwebhooks.Store, flow *whsub.Flow, logger *zap.Logger) *pgwebhooks.LeaseListener {
	return pgwebhooks.NewLeaseListener(store, flow, logger.Named("webhooks"))
}

// provideEmbedAdmits hands the subscriber the access domain's scope check,
// asked afresh for every event.
func provideEmbedAdmits(s *access.Service) whsub.EmbedAdmitsFunc { return s.EmbedAdmits }

// provideEmbedBelongsTo hands the endpoint ops the access domain's
// ownership check of embeds.
func provideEmbedBelongsTo(s *access.Service) webhooks.EmbedBelongsToFunc { return s.EmbedBelongsTo }

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
func webhookEgressCheck(cfg config.Config) webhooks.EgressCheckFunc {
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
