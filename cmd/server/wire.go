//go:build wireinject

package main

import (
	"context"

	"github.com/google/wire"
	"go.uber.org/zap"

	"github.com/standmeet/standmeet/internal/infra/config"
)

// initApp is the composition root: Wire generates its body in wire_gen.go
// (make generate). Every part of the server is built here and nowhere else.
func initApp(ctx context.Context, cfg config.Config, logger *zap.Logger) (*App, func(), error) {
	wire.Build(
		// infrastructure
		providePool, provideMigrations, provideRegistry, provideMetricsHandler,
		provideRiverConfig, provideWorker, provideTasksHandler, provideJobOps,
		// the event bus
		provideInserter, provideEventMetrics, provideRelay, provideEventStore, providePruneWorker,
		provideSubscriptions,
		// inbound webhooks (wire_inbound.go, unseal.go)
		provideBox, provideInboundSeal, provideInboundUnseal, provideRecorder,
		provideVerifierRegistry, provideInboundJobs, provideInboundUnitOfWork, provideSupplierUnitOfWork,
		provideSupplierService, provideInboundRouter, provideInboundService, provideInboundGateway, provideSourceCache, provideInboundRefusals,
		provideInboundProcessor, provideInboundProcessWorker, provideInboundPurgeWorker, provideHooksMounter, provideInboundOps,
		// owners, sessions, API keys, IP bans (wire_owner.go)
		provideRecoveryMailer, provideOwnerUnitOfWork, provideOwnerService, provideAuthGate, provideOwnerHint,
		// outbound webhooks (wire_webhooks.go, unseal.go)
		provideWebhookSeal, provideWebhookUnseal, provideWebhookUnitOfWork, provideWebhookService, provideWebhookOps, provideWebhookStore, provideWebhookPoster, provideWebhookFanouter, provideWebhookDeliverer, provideWebhookFanoutWorker, provideWebhookDeliverWorker, provideWebhookPruneWorker, provideWebhookSweepWorker, provideWebhookLeaseListener, provideWebhookHealth, provideEmbedAdmits, provideEmbedBelongsTo,
		// corpus and access (wire_corpus.go, wire_access.go)
		provideCorpusUnitOfWork, provideCorpusService, provideCorpusIndexWorker, provideVaultImport, provideAccessUnitOfWork, provideAccessService, provideOwnerDirectory, providePublicAPI,
		// events published by the owner's services (wire_publish.go)
		providePublishLimiter, providePublishService, providePublishOps,
		// what the parts contribute (collect.go)
		provideWorkers, providePeriodicJobs, provideOps, provideEndpoints, provideMounters, provideBackground, provideMiddleware,
		// surfaces: MCP, OpenAPI, admin UI (wire_surfaces.go)
		provideMCP, provideOpenAPI, provideWebAuth, provideWeb,
		// HTTP
		provideAuthenticator, provideServer,
		// CLI
		provideCommands, provideMasterKeyRotator, provideHeaderSealer,
		wire.Struct(new(App), "*"),
	)
	return nil, nil, nil
}
