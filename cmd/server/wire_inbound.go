package main

// Providers of the inbound webhook pipeline: sources and their
// ops, the /hooks gateway, the inbox worker and replay-key purge on River,
// and supplier connections, the first handler.

import (
	"github.com/google/wire"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/standmeet/standmeet/internal/adapters/httpapi/hook"
	"github.com/standmeet/standmeet/internal/adapters/postgres/inbounddb"
	"github.com/standmeet/standmeet/internal/adapters/postgres/uow"
	"github.com/standmeet/standmeet/internal/adapters/riverjob"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/infra/config"
	"github.com/standmeet/standmeet/internal/infra/events"
	"github.com/standmeet/standmeet/internal/owner/inbound"
	"github.com/standmeet/standmeet/internal/owner/inbound/supplier"
	"github.com/standmeet/standmeet/internal/owner/inbound/verifier"
)

// InboundSet provides inbound webhooks: sources, the gateway, the inbox
// processor and its workers, and supplier connections.
var InboundSet = wire.NewSet(
	verifier.NewDefaultRegistry,
	riverjob.NewInboundJobs,
	provideInboundUnitOfWork,
	provideSupplierUnitOfWork,
	provideSupplierService,
	provideInboundRouter,
	provideInboundService,
	provideInboundGateway,
	provideSourceCache,
	provideInboundRefusals,
	provideInboundProcessor,
	provideInboundProcessWorker,
	provideInboundPurgeWorker,
	provideHooksMounter,
	provideInboundOps,
)

// inboundOps are the ops of inbound sources and supplier connections (a
// named type, so Wire tells the parts' op sets apart).
type inboundOps op.Set

// provideInboundUnitOfWork records the gateway's inbound.message.received
// events in the admitting transaction, all of a batch in one statement.
func provideInboundUnitOfWork(pool *pgxpool.Pool, jobs *riverjob.InboundJobs, rec *events.Recorder) *inbounddb.UnitOfWork {
	return inbounddb.New(pool, jobs.With).RecordWith(func(tx pgx.Tx) inbounddb.BatchRecorder { return rec.Batch(tx) })
}

func provideSupplierUnitOfWork(pool *pgxpool.Pool, rec uow.Recorder) *uow.UnitOfWork[supplier.Tx] {
	return inbounddb.NewSupplier(pool, rec)
}

func provideSupplierService(uow *uow.UnitOfWork[supplier.Tx]) *supplier.Service {
	return supplier.NewService(uow, domain.SystemClock{})
}

// provideInboundRouter is where domains register their inbound handlers: one
// route per handler, by source kind and event-type glob.
func provideInboundRouter(sup *supplier.Service) (*inbound.Router, error) {
	return inbound.NewRouter(
		sup.Route(),
	)
}

// provideSourceCache is the gateway's cache of sources, shared with the
// service so a change made on this replica applies at once.
func provideSourceCache() *inbound.SourceCache { return inbound.NewSourceCache(inbound.SourceCacheTTL) }

// provideInboundRefusals keeps the requests the gateway refuses, written in
// the background (a Background of the server).
func provideInboundRefusals(uow *inbounddb.UnitOfWork, logger *zap.Logger) *inbound.RefusalLog {
	log := logger.Named("inbound")
	return inbound.NewRefusalLog(uow, func(err error) { log.Warn("inbound refusals not recorded", zap.Error(err)) })
}

func provideInboundService(uow *inbounddb.UnitOfWork, reg *verifier.Registry, seal inbound.SealFunc, cfg config.Config, cache *inbound.SourceCache,
	pool *pgxpool.Pool) *inbound.Service {
	return inbound.NewService(inbound.ServiceDeps{UoW: uow, Verifiers: reg, Seal: seal, Clock: domain.SystemClock{},
		Policy: inbound.DefaultRetryPolicy(), Retention: cfg.EventRetention, Cache: cache, Refusals: uow, Stats: inbounddb.NewStats(pool)})
}

// provideInboundGateway asks the router, as it admits a message, whether any
// route can want it: a message none can is admitted done, with no job.
func provideInboundGateway(uow *inbounddb.UnitOfWork, reg *verifier.Registry, unseal inbound.UnsealFunc, cache *inbound.SourceCache,
	refusals *inbound.RefusalLog, router *inbound.Router) *inbound.Gateway {
	return inbound.NewGateway(inbound.GatewayDeps{Sources: uow, Inbox: uow, Cache: cache, Verifiers: reg, Unseal: unseal,
		Clock: domain.SystemClock{}, Policy: inbound.DefaultRetryPolicy(), Router: router, Refused: refusals.Add})
}

func provideInboundProcessor(inbox *inbounddb.UnitOfWork, router *inbound.Router, pool *pgxpool.Pool, rec uow.Recorder) *inbound.Processor {
	return inbound.NewProcessor(inbound.ProcessorDeps{Inbox: inbox.States(), Router: router, Clock: domain.SystemClock{}, Policy: inbound.DefaultRetryPolicy(),
		DeadLetters: inbounddb.NewDeadLetters(pool, rec)})
}

func provideInboundProcessWorker(proc *inbound.Processor, logger *zap.Logger) *riverjob.InboundProcessWorker {
	return riverjob.NewInboundProcessWorker(proc, logger.Named("inbound"))
}

func provideInboundPurgeWorker(svc *inbound.Service, logger *zap.Logger) *riverjob.InboundPurgeWorker {
	return riverjob.NewInboundPurgeWorker(svc.Maintain, logger.Named("inbound"))
}

func provideHooksMounter(gw *inbound.Gateway, logger *zap.Logger, reg *prometheus.Registry) (*hook.Mounter, error) {
	return hook.New(gw, logger.Named("hooks"), reg)
}

func provideInboundOps(svc *inbound.Service, sup *supplier.Service) inboundOps {
	return inboundOps(append(svc.Ops(), sup.Ops()...))
}
