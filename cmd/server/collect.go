package main

// This file gathers what every part of the server contributes — River
// workers, periodic jobs, ops, HTTP mounters, background loops — into the
// lists the server is built from. Each part adds its parameter and its line
// here; Wire supplies the parameters.

import (
	"github.com/google/wire"
	"github.com/riverqueue/river"
	"go.uber.org/zap"

	"github.com/standmeet/standmeet/internal/access"
	"github.com/standmeet/standmeet/internal/adapters/eventop"
	"github.com/standmeet/standmeet/internal/adapters/httpapi"
	"github.com/standmeet/standmeet/internal/adapters/httpapi/auth"
	"github.com/standmeet/standmeet/internal/adapters/httpapi/hook"
	"github.com/standmeet/standmeet/internal/adapters/httpapi/public"
	"github.com/standmeet/standmeet/internal/adapters/httpapi/vaultimport"
	"github.com/standmeet/standmeet/internal/adapters/mcp"
	"github.com/standmeet/standmeet/internal/adapters/openapi"
	"github.com/standmeet/standmeet/internal/adapters/postgres/webhookdb"
	"github.com/standmeet/standmeet/internal/adapters/riverjob"
	"github.com/standmeet/standmeet/internal/adapters/web"
	"github.com/standmeet/standmeet/internal/corpus"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/infra/config"
	"github.com/standmeet/standmeet/internal/infra/events"
	"github.com/standmeet/standmeet/internal/owner"
	"github.com/standmeet/standmeet/internal/owner/inbound"
)

// CollectSet provides the lists the server is built from.
var CollectSet = wire.NewSet(
	provideWorkers,
	providePeriodicJobs,
	provideSubscriptions,
	provideOps,
	provideEndpoints,
	provideMounters,
	provideBackground,
	provideMiddleware,
)

func provideWorkers(prune *events.PruneWorker, inboundProcess *riverjob.InboundProcessWorker, inboundPurge *riverjob.InboundPurgeWorker,
	webhookFanout *riverjob.WebhookFanoutWorker, webhookDeliver *riverjob.WebhookDeliverWorker, webhookPrune *riverjob.WebhookPruneWorker,
	corpusIndex *riverjob.CorpusIndexWorker) (*river.Workers, error) {
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, prune); err != nil {
		return nil, err
	}
	if err := riverjob.RegisterInbound(workers, inboundProcess, inboundPurge); err != nil {
		return nil, err
	}
	if err := riverjob.RegisterWebhooks(workers, webhookFanout, webhookDeliver, webhookPrune); err != nil {
		return nil, err
	}
	if err := riverjob.RegisterCorpus(workers, corpusIndex); err != nil {
		return nil, err
	}
	return workers, nil
}

func providePeriodicJobs(cfg config.Config) []*river.PeriodicJob {
	var jobs []*river.PeriodicJob
	jobs = append(jobs, events.PeriodicJobs(cfg.EventRetention)...)
	jobs = append(jobs, riverjob.InboundPeriodicJobs()...)
	jobs = append(jobs, riverjob.WebhookPrunePeriodic(cfg.EventRetention))
	return jobs
}

// provideSubscriptions lists every subscriber of the bus.
func provideSubscriptions() []events.Subscription {
	return subscriptionsOf(
		webhookFanoutSubscriber(),
		corpusIndexSubscriber(),
	)
}

func provideOps(eventStore *events.Store, inbound inboundOps, owners *owner.Service, webhookOps webhookOps,
	corpusSvc *corpus.Service, accessSvc *access.Service, publishOps publishOps, jobs jobOps,
	// a new domain's ops parameter goes above this line (cmd/scaffold writes it here)
) op.Set {
	var ops op.Set
	ops = append(ops, jobs...)
	ops = append(ops, owners.Ops()...)
	ops = append(ops, eventop.Ops(eventStore)...)
	ops = append(ops, inbound...)
	ops = append(ops, webhookOps...)
	ops = append(ops, corpusSvc.Ops()...)
	ops = append(ops, accessSvc.Ops()...)
	ops = append(ops, publishOps...)
	// a new domain's ops go above this line (cmd/scaffold writes them here)
	return ops
}

// provideEndpoints pairs every op with its line of the REST route table;
// the server does not start when an op has no route or a route names no op.
func provideEndpoints(ops op.Set) (httpapi.Endpoints, error) {
	return httpapi.Bind(ops, httpapi.Routes())
}

func provideMounters(hooksGateway *hook.Mounter, authGate *auth.Gate, mcpTools *mcp.Handler, openAPI *openapi.Handler, adminUI *web.Handler,
	publicAPI *public.Mounter, vaultImport *vaultimport.Mounter) []httpapi.Mounter {
	var ms []httpapi.Mounter
	ms = append(ms, authGate)
	ms = append(ms, hooksGateway)
	ms = append(ms, mcpTools, openAPI, adminUI)
	ms = append(ms, publicAPI, vaultImport)
	return ms
}

func provideBackground(cfg config.Config, logger *zap.Logger, relay *events.Relay, hint *ownerHint,
	webhookLanes *webhookdb.Lanes, sealHeaders headerSealer, inboundRefusals *inbound.RefusalLog, metrics metricsHandler) []Background {
	var bs []Background
	bs = append(bs, sealHeaders)
	if cfg.DebugAddr != "" {
		bs = append(bs, debugServer{addr: cfg.DebugAddr, logger: logger})
	}
	if cfg.MetricsAddr != "" {
		bs = append(bs, metricsServer{addr: cfg.MetricsAddr, handler: metrics, logger: logger})
	}
	bs = append(bs, hint)
	bs = append(bs, relay)
	bs = append(bs, webhookLanes)
	bs = append(bs, inboundRefusals)
	return bs
}

func provideMiddleware(authGate *auth.Gate) []echoMiddleware {
	var ms []echoMiddleware
	// First, so a banned client reaches no other middleware or handler.
	ms = append(ms, authGate.BanMiddleware)
	return ms
}
