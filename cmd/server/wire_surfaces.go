package main

import (
	"fmt"
	"net/http"

	"github.com/google/wire"
	"go.uber.org/zap"

	"github.com/standmeet/standmeet/internal/adapters/httpapi"
	"github.com/standmeet/standmeet/internal/adapters/httpapi/auth"
	"github.com/standmeet/standmeet/internal/adapters/mcp"
	"github.com/standmeet/standmeet/internal/adapters/openapi"
	"github.com/standmeet/standmeet/internal/adapters/web"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/owner"
)

// The surfaces other than REST — MCP tools, the OpenAPI document, the admin
// UI — are projections of the same ops that httpapi.MountOps projects to
// REST (MCP and OpenAPI with each op's route); each is an httpapi.Mounter
// (collect.go). buildVersion is in
// wire_webhooks.go.

// SurfacesSet provides the MCP tools, the OpenAPI document and the admin UI.
var SurfacesSet = wire.NewSet(
	provideMCP,
	provideOpenAPI,
	provideWebAuth,
	provideWeb,
)

func provideMCP(eps httpapi.Endpoints, a httpapi.Authenticator, logger *zap.Logger) (*mcp.Handler, error) {
	return mcp.New(eps, a, logger, mcp.Options{Version: buildVersion()})
}

func provideOpenAPI(eps httpapi.Endpoints) (*openapi.Handler, error) {
	return openapi.NewHandler(eps, openapi.Options{APIVersion: buildVersion(), SessionCookie: auth.SessionCookie, Webhooks: domain.WebhookEventTypes()})
}

// provideWebAuth gives the admin UI the owner domain's sign-in, sessions and
// CSRF tokens through the functions it declares.
func provideWebAuth(g *auth.Gate, owners *owner.Service) web.Auth {
	return web.Auth{
		Login: func(w http.ResponseWriter, r *http.Request, email, password string) error {
			s, err := g.Login(r.Context(), email, password, g.ClientIP(r), r.UserAgent())
			if err != nil {
				return err
			}
			g.SetSessionCookies(w, r, s)
			return nil
		},
		Logout:    g.Logout,
		HasOwners: owners.HasOwners,
		Session: func(r *http.Request) (web.Session, error) {
			s, err := g.SessionFromRequest(r)
			if err != nil {
				return web.Session{}, err
			}
			operator, err := owners.IsOperator(r.Context(), s.OwnerID)
			if err != nil {
				return web.Session{}, fmt.Errorf("is the session's owner the operator: %w", err)
			}
			return web.Session{Caller: op.Caller{OwnerID: s.OwnerID, SessionID: s.ID}, CSRFToken: auth.CSRFToken(r), ID: s.ID, Operator: operator}, nil
		},
	}
}

func provideWeb(ops op.Set, a web.Auth, logger *zap.Logger) (*web.Handler, error) {
	return web.New(web.Deps{Ops: ops, Auth: a, Logger: logger})
}
