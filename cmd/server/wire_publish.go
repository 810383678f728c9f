package main

// Publishing events from the owner's other services: events.publish and
// events.publish_batch, with the per-key rate limiter.

import (
	"github.com/google/wire"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/standmeet/standmeet/internal/adapters/postgres/publishdb"
	"github.com/standmeet/standmeet/internal/adapters/postgres/uow"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/infra/config"
	"github.com/standmeet/standmeet/internal/infra/ratelimit"
	"github.com/standmeet/standmeet/internal/owner/publish"
)

// PublishSet provides events.publish and events.publish_batch.
var PublishSet = wire.NewSet(
	providePublishLimiter,
	providePublishService,
	providePublishOps,
)

// publishOps are the events.publish* ops (a named type so Wire tells the
// op lists apart).
type publishOps op.Set

// providePublishLimiter grants each key STANDMEET_PUBLISH_RATE events and
// STANDMEET_PUBLISH_BYTES_RATE bytes of data per second, with a burst of a
// second's worth and never less than one full batch, so a maximal batch can
// always pass once the bucket is full.
func providePublishLimiter(cfg config.Config) *ratelimit.Limiter {
	return ratelimit.New(
		ratelimit.Rate{PerSecond: float64(cfg.PublishRate), Burst: float64(max(cfg.PublishRate, publish.MaxBatch))},
		ratelimit.Rate{PerSecond: float64(cfg.PublishBytesRate), Burst: float64(max(cfg.PublishBytesRate, publish.MaxBatch*publish.MaxDataBytes))},
		nil)
}

func providePublishService(pool *pgxpool.Pool, rec uow.Recorder, limiter *ratelimit.Limiter) *publish.Service {
	return publish.NewService(publishdb.NewUnitOfWork(pool, rec), limiter)
}

func providePublishOps(svc *publish.Service) publishOps { return publishOps(svc.Ops()) }
