package main

// The access domain: roles, access codes, embeds, access
// requests, and the public routes (search, redeem, access requests).

import (
	"github.com/google/wire"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/zap"

	"github.com/standmeet/standmeet/internal/access"
	"github.com/standmeet/standmeet/internal/adapters/httpapi/auth"
	"github.com/standmeet/standmeet/internal/adapters/httpapi/public"
	"github.com/standmeet/standmeet/internal/adapters/postgres/accessdb"
	"github.com/standmeet/standmeet/internal/adapters/postgres/uow"
	"github.com/standmeet/standmeet/internal/corpus"
	"github.com/standmeet/standmeet/internal/domain"
)

// AccessSet provides the access domain and the public routes.
var AccessSet = wire.NewSet(
	provideAccessUnitOfWork,
	provideAccessService,
	accessdb.NewOwners,
	providePublicAPI,
)

func provideAccessUnitOfWork(pool *pgxpool.Pool, rec uow.Recorder) *uow.UnitOfWork[access.Tx] {
	return accessdb.NewUnitOfWork(pool, rec)
}

func provideAccessService(uow *uow.UnitOfWork[access.Tx]) *access.Service {
	return access.New(access.Deps{UoW: uow, Clock: domain.SystemClock{}})
}

// providePublicAPI serves the routes anyone may call; client addresses for
// the access-request rate limit come from the auth gate, which knows the
// trusted proxies.
func providePublicAPI(owners *accessdb.Owners, corpusSvc *corpus.Service, accessSvc *access.Service, gate *auth.Gate, logger *zap.Logger) *public.Mounter {
	return public.New(public.Deps{
		ResolveOwner:  owners.Resolve,
		Search:        corpusSvc.SearchPublished,
		Redeem:        accessSvc.Redeem,
		RequestAccess: accessSvc.CreateAccessRequest,
		ClientIP:      gate.ClientIP,
		Logger:        logger.Named("public"),
	})
}
