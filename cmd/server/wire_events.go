package main

// The event bus: River's inserter, the Recorder every unit of work binds
// to its transaction, the relay with its subscriptions, the events store
// behind events.* and the retention worker.

import (
	"github.com/google/wire"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"go.uber.org/zap"

	"github.com/standmeet/standmeet/internal/adapters/postgres/uow"
	"github.com/standmeet/standmeet/internal/adapters/riverjob"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/infra/config"
	"github.com/standmeet/standmeet/internal/infra/events"
)

// EventsSet provides the bus; infra/events receives the catalog as a plain
// function (provideRecorder) and imports no domain.
var EventsSet = wire.NewSet(
	provideInserter,
	events.NewMetrics,
	provideRecorder,
	provideTxRecorder,
	provideRelay,
	events.NewStore,
	providePruneWorker,
)

func provideInserter(pool *pgxpool.Pool, cfg config.Config, logger *zap.Logger) (*riverjob.Inserter, error) {
	return riverjob.NewInserter(pool, cfg.RiverFetchCooldown, logger)
}

// provideRecorder hands infra/events the catalog as a plain function, so it
// refuses undeclared types without importing the domain, and the relay's
// subscriptions, so a batch writes an event nobody wants as relayed.
func provideRecorder(m *events.Metrics, subs []events.Subscription) (*events.Recorder, error) {
	rec := events.NewRecorder(func(t string) bool {
		_, ok := domain.LookupEventType(t)
		return ok
	}, m)
	if err := rec.Route(subs); err != nil {
		return nil, err
	}
	return rec, nil
}

func provideRelay(pool *pgxpool.Pool, ins *riverjob.Inserter, subs []events.Subscription, m *events.Metrics, logger *zap.Logger) (*events.Relay, error) {
	return events.NewRelay(pool, ins.Client, subs, events.RelayOptions{Logger: logger.Named("relay"), Metrics: m})
}

func providePruneWorker(pool *pgxpool.Pool, logger *zap.Logger, m *events.Metrics) *events.PruneWorker {
	return events.NewPruneWorker(pool, logger.Named("retention"), m)
}

// subscriber is how a domain declares a subscriber: the River job kind its
// worker runs under and the event-type globs it wants.
type subscriber struct {
	Kind  string
	Globs []string
	// Exposure, when set, limits the subscriber to types of that exposure
	// (webhook.fanout takes only Webhook-exposed types).
	Exposure *domain.Exposure
	// Queue is the River queue of its jobs; empty is River's default.
	Queue string
	// Owners, when set, tells the relay and the Recorder's batches which
	// owners it has work for (events.Subscription.Owners).
	Owners events.OwnersQuery
}

// subscriptionsOf expands each subscriber's globs against the catalog, so
// the relay receives plain data.
func subscriptionsOf(subs ...subscriber) []events.Subscription {
	out := make([]events.Subscription, 0, len(subs))
	for _, s := range subs {
		var types []string
		if s.Exposure != nil {
			types = domain.ExpandGlobs(s.Globs, *s.Exposure)
		} else {
			types = domain.ExpandGlobs(s.Globs)
		}
		sub := events.Subscription{Kind: s.Kind, EventTypes: types, Owners: s.Owners}
		if s.Queue != "" {
			sub.InsertOpts = &river.InsertOpts{Queue: s.Queue}
		}
		out = append(out, sub)
	}
	return out
}

// provideTxRecorder binds the Recorder to each unit of work's transaction.
func provideTxRecorder(rec *events.Recorder) uow.Recorder {
	return func(tx pgx.Tx) domain.Recorder { return rec.With(tx) }
}
