package main

import (
	"github.com/google/wire"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"
	"go.uber.org/zap"

	"github.com/standmeet/standmeet/internal/adapters/httpapi"
	"github.com/standmeet/standmeet/internal/adapters/httpapi/auth"
	"github.com/standmeet/standmeet/internal/adapters/web"
	"github.com/standmeet/standmeet/internal/infra/config"
	"github.com/standmeet/standmeet/internal/infra/migrate"
	"github.com/standmeet/standmeet/internal/owner"
)

// ServerSet provides the HTTP server and the CLI's commands.
var ServerSet = wire.NewSet(
	provideServer,
	wire.Struct(new(Commands), "*"),
)

// echoMiddleware is a named type so Wire can tell the middleware list apart.
type echoMiddleware = echo.MiddlewareFunc

func provideServer(pool *pgxpool.Pool, ms []migrate.Migration, eps httpapi.Endpoints, auth httpapi.Authenticator,
	mw []echoMiddleware, mounters []httpapi.Mounter, metrics metricsHandler, tasks tasksHandler, gate *auth.Gate, owners *owner.Service, admin *web.Handler, logger *zap.Logger,
	cfg config.Config) *httpapi.Server {
	if cfg.MetricsAddr != "" {
		// Served on its own listener: never on the public one.
		metrics = nil
	}
	return httpapi.New(httpapi.Deps{
		Pool:          pool,
		Migrations:    ms,
		Endpoints:     eps,
		Auth:          auth,
		Middleware:    mw,
		Mounters:      mounters,
		Metrics:       metrics,
		Tasks:         tasks,
		TasksAuth:     httpapi.AuthenticatorFunc(gate.AuthenticateSameOrigin),
		IsOperator:    owners.IsOperator,
		AdminNotFound: admin.NotFound,
		Logger:        logger,
		OwnBodyLimit:  []string{"/hooks/", "/api/admin/vault/import"},
	})
}
