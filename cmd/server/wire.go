//go:build wireinject

package main

import (
	"context"

	"github.com/google/wire"
	"go.uber.org/zap"

	"github.com/standmeet/standmeet/internal/infra/config"
)

// initApp is the composition root: Wire generates its body in wire_gen.go
// (make generate). Every part of the server is built here and nowhere else;
// each domain declares its provider set beside its wiring (wire_<domain>.go)
// and adds one line here. The sets are exported because this file builds
// only under the wireinject tag, so vet and staticcheck see no other use.
func initApp(ctx context.Context, cfg config.Config, logger *zap.Logger) (*App, func(), error) {
	wire.Build(
		InfraSet,   // wire_infra.go
		EventsSet,  // wire_events.go
		SealSet,    // unseal.go
		OwnerSet,   // wire_owner.go
		AccessSet,  // wire_access.go
		CorpusSet,  // wire_corpus.go
		PublishSet, // wire_publish.go
		WebhookSet, // wire_webhooks.go
		InboundSet, // wire_inbound.go
		// a new domain's set goes above this line (cmd/scaffold writes it here)
		SurfacesSet, // wire_surfaces.go
		ServerSet,   // server.go
		CollectSet,  // collect.go
		wire.Struct(new(App), "*"),
	)
	return nil, nil, nil
}
