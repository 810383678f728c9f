package httpapi

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
)

// operatorOnly serves h to a caller the Authenticator accepts (an API key
// as a bearer token, which is how Prometheus scrapes, or a session) who
// holds the operator role: the figures are the whole instance's, not one
// owner's. Without credentials: 401; another owner: 403.
// metricsMeta names /metrics for op.Authorize: the read scope grants it.
var metricsMeta = op.Meta{Name: "/metrics", Scopes: op.Reads}

func (s *Server) operatorOnly(h http.Handler) echo.HandlerFunc {
	forbidden := domain.Forbidden("OPERATOR_ONLY", "/metrics is the operator's")
	return func(c echo.Context) error {
		if s.deps.Auth == nil || s.deps.IsOperator == nil {
			return WriteError(c, s.logger, forbidden)
		}
		caller, err := s.deps.Auth.Authenticate(c.Request())
		if err != nil {
			return WriteError(c, s.logger, err)
		}
		// The figures only read, so a key with the read scope (a
		// Prometheus scraper's) is enough.
		if err := op.Authorize(metricsMeta, caller); err != nil {
			return WriteError(c, s.logger, err)
		}
		ok, err := s.deps.IsOperator(c.Request().Context(), caller.OwnerID)
		if err != nil {
			return WriteError(c, s.logger, err)
		}
		if !ok {
			return WriteError(c, s.logger, forbidden)
		}
		h.ServeHTTP(c.Response(), c.Request())
		return nil
	}
}
