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
		provideRiverConfig, provideWorker, provideTasksHandler,
		// the event bus
		provideInserter, provideEventMetrics, provideRelay, provideEventStore, providePruneWorker,
		provideSubscriptions,
		// what the parts contribute (collect.go)
		provideWorkers, providePeriodicJobs, provideOps, provideMounters, provideBackground, provideMiddleware,
		// HTTP
		provideAuthenticator, provideServer,
		// CLI
		provideCommands,
		wire.Struct(new(App), "*"),
	)
	return nil, nil, nil
}
