// Package httpapi is the HTTP adapter of the StandMeet server: the Echo
// server, its middleware (request ids, logging, panic recovery, body limits),
// /healthz and /readyz, the REST projection of the declared ops, and the
// mounting point for the other HTTP surfaces (/hooks, the admin UI, /mcp,
// River's UI at /admin/tasks, /metrics).
package httpapi

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"go.uber.org/zap"

	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/infra/migrate"
)

// Mounter adds routes of its own to the server (the inbound gateway, the
// admin UI, MCP, …). The composition root hands the server every Mounter.
type Mounter interface {
	Mount(e *echo.Echo)
}

// MounterFunc adapts a function to Mounter.
type MounterFunc func(e *echo.Echo)

// Mount calls f.
func (f MounterFunc) Mount(e *echo.Echo) { f(e) }

// DefaultBodyLimit caps request bodies outside the routes that set their own.
const DefaultBodyLimit = 2 << 20

// Deps is what the server is built from.
type Deps struct {
	Pool       *pgxpool.Pool
	Migrations []migrate.Migration
	// Endpoints are the ops the REST API serves, each with its route
	// (Bind).
	Endpoints Endpoints
	Auth      Authenticator
	// Middleware runs before every handler, after request id, logging and
	// recovery (e.g. the IP-ban check).
	Middleware []echo.MiddlewareFunc
	Mounters   []Mounter
	// Metrics serves /metrics to the operator only (IsOperator): 401
	// without credentials, 403 for another owner; nil = not served.
	Metrics http.Handler
	// Tasks serves River's UI under /admin/tasks; nil = not served. It
	// cannot scope by owner, so only the operator reaches it (IsOperator);
	// every other owner gets 404, and /admin/tasks?job=<id> leads them to
	// their own job's page at JobPagePrefix+<id> instead.
	Tasks http.Handler
	// TasksAuth authenticates River UI's requests without a CSRF token (its
	// frontend cannot send ours); cross-origin requests are refused before
	// it runs, by Fetch Metadata and Origin. Nil = Auth.
	TasksAuth Authenticator
	// AdminNotFound, when set, answers a browser's request for an admin
	// page this owner has nothing at (River's UI for anyone but the
	// operator) with the admin's own not-found page, instead of the JSON
	// error.
	AdminNotFound echo.HandlerFunc
	// IsOperator tells whether an owner holds the operator role; nil = no
	// owner does.
	IsOperator func(ctx context.Context, ownerID uuid.UUID) (bool, error)
	Logger     *zap.Logger
	// OwnBodyLimit lists path prefixes whose handlers enforce their own body
	// limit (the inbound gateway's per-source limit, the vault import).
	OwnBodyLimit []string
}

// Server is the HTTP server.
type Server struct {
	echo   *echo.Echo
	deps   Deps
	logger *zap.Logger
}

// New builds the server and registers every route.
func New(d Deps) *Server {
	if d.Logger == nil {
		d.Logger = zap.NewNop()
	}
	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	s := &Server{echo: e, deps: d, logger: d.Logger}
	e.HTTPErrorHandler = func(err error, c echo.Context) {
		if c.Response().Committed {
			return
		}
		if werr := WriteError(c, s.logger, err); werr != nil {
			// The error itself is reported by WriteError when it is the
			// server's; this is only the answer failing to reach the client.
			s.logger.Debug("error answer not written", zap.String("request_id", RequestID(c)), zap.Error(werr))
		}
	}
	e.Use(middleware.RequestID())
	e.Use(s.logRequests)
	e.Use(middleware.RecoverWithConfig(middleware.RecoverConfig{
		DisableStackAll: true,
		// The panic goes to the error handler with its stack, which logs it
		// once; logging it here too would log it twice.
		LogErrorFunc: func(_ echo.Context, err error, stack []byte) error {
			return &panicError{err: err, stack: stack}
		},
	}))
	e.Use(middleware.BodyLimitWithConfig(middleware.BodyLimitConfig{
		Limit: "2M",
		Skipper: func(c echo.Context) bool {
			for _, p := range d.OwnBodyLimit {
				if strings.HasPrefix(c.Request().URL.Path, p) {
					return true
				}
			}
			return false
		},
	}))
	for _, m := range d.Middleware {
		e.Use(m)
	}
	e.GET("/healthz", func(c echo.Context) error { return c.JSON(http.StatusOK, map[string]string{"status": "ok"}) })
	e.GET("/readyz", s.readyz)
	if d.Metrics != nil {
		e.GET("/metrics", s.operatorOnly(d.Metrics))
	}
	if d.Tasks != nil {
		s.mountTasks(e, d.Tasks)
	}
	if d.Auth != nil {
		MountOps(e, d.Endpoints, d.Auth, s.logger)
	}
	for _, m := range d.Mounters {
		m.Mount(e)
	}
	return s
}

// Handler returns the server as an http.Handler (for tests and embedding).
func (s *Server) Handler() http.Handler { return s.echo }

// Echo returns the underlying Echo instance (route listing for tests).
func (s *Server) Echo() *echo.Echo { return s.echo }

// Serve listens on addr until ctx is cancelled, then stops accepting, drains
// in-flight requests for up to drain, and returns.
func (s *Server) Serve(ctx context.Context, ln net.Listener, drain time.Duration) error {
	srv := &http.Server{
		Handler:           s.echo,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), drain)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return err
	}
	return nil
}

func (s *Server) readyz(c echo.Context) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
	defer cancel()
	if s.deps.Pool == nil {
		return c.JSON(http.StatusServiceUnavailable, ErrorBody{Error: ErrorDetail{Code: "UNAVAILABLE", Message: "no database"}})
	}
	if err := s.deps.Pool.Ping(ctx); err != nil {
		return c.JSON(http.StatusServiceUnavailable, ErrorBody{Error: ErrorDetail{Code: "DATABASE_UNREACHABLE", Message: "database unreachable"}})
	}
	pending, err := migrate.Pending(ctx, s.deps.Pool, s.deps.Migrations)
	if err != nil {
		return c.JSON(http.StatusServiceUnavailable, ErrorBody{Error: ErrorDetail{Code: "DATABASE_UNREACHABLE", Message: "cannot read migrations"}})
	}
	if len(pending) > 0 {
		return c.JSON(http.StatusServiceUnavailable, ErrorBody{Error: ErrorDetail{Code: "MIGRATIONS_PENDING", Message: strings.Join(pending, ", ") + " not applied"}})
	}
	return c.JSON(http.StatusOK, map[string]string{"status": "ready"})
}

// JobPagePrefix is where an owner who is not the operator reads one of
// their own jobs (the admin UI's owner-scoped job page).
const JobPagePrefix = "/admin/jobs/"

// mountTasks serves River's UI to the operator only, and turns the
// contract's /admin/tasks?job=<id> into River UI's job page for the
// operator and into the owner-scoped job page for everyone else.
//
// River UI shows and changes every owner's jobs and queues, so any other
// owner gets 404, as for another owner's row anywhere else. Its frontend
// cannot send our CSRF token, so its unsafe requests are protected by Fetch
// Metadata and Origin instead (http.CrossOriginProtection): a cross-site
// request is refused with 403 before credentials are even read.
// tasksMeta names /admin/tasks for op.Authorize: no scope grants it, so
// only a full key (or a session) reaches it.
var tasksMeta = op.Meta{Name: "/admin/tasks"}

func (s *Server) mountTasks(e *echo.Echo, tasks http.Handler) {
	origin := http.NewCrossOriginProtection()
	authn := s.deps.TasksAuth
	if authn == nil {
		authn = s.deps.Auth
	}
	notFound := domain.NotFound("NOT_FOUND", "not found")
	guarded := func(c echo.Context) error {
		r := c.Request()
		if authn == nil {
			return WriteError(c, s.logger, notFound)
		}
		if err := origin.Check(r); err != nil {
			return WriteError(c, s.logger, domain.Forbidden("CROSS_ORIGIN", "cross-site request refused"))
		}
		caller, err := authn.Authenticate(r)
		if err != nil {
			if strings.Contains(r.Header.Get("Accept"), "text/html") {
				return c.Redirect(http.StatusSeeOther, "/admin/login?next="+url.QueryEscape(r.URL.RequestURI()))
			}
			return WriteError(c, s.logger, err)
		}
		// River's UI changes every owner's jobs: no key limited by scopes
		// reaches it, whatever its owner's role.
		if err := op.Authorize(tasksMeta, caller); err != nil {
			return WriteError(c, s.logger, err)
		}
		operator := false
		if s.deps.IsOperator != nil {
			if operator, err = s.deps.IsOperator(r.Context(), caller.OwnerID); err != nil {
				return WriteError(c, s.logger, err)
			}
		}
		job := ""
		if r.URL.Path == "/admin/tasks" || r.URL.Path == "/admin/tasks/" {
			job = c.QueryParam("job")
		}
		switch {
		case job != "" && operator:
			return c.Redirect(http.StatusSeeOther, "/admin/tasks/jobs/"+url.PathEscape(job))
		case job != "":
			return c.Redirect(http.StatusSeeOther, JobPagePrefix+url.PathEscape(job))
		case !operator && s.deps.AdminNotFound != nil && strings.Contains(r.Header.Get("Accept"), "text/html"):
			return s.deps.AdminNotFound(c)
		case !operator:
			return WriteError(c, s.logger, notFound)
		}
		tasks.ServeHTTP(c.Response(), r)
		return nil
	}
	e.Any("/admin/tasks", guarded)
	e.Any("/admin/tasks/*", guarded)
}

// logRequests is the one place a request is logged: a line per request,
// preceded by one Error line per server-side failure reported with Fail
// (the error handler's 500s and panics, the admin pages' and MCP tools'
// internal errors), each carrying the request's id, method, path and status.
func (s *Server) logRequests(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		failed := &failures{}
		c.SetRequest(c.Request().WithContext(withFailures(c.Request().Context(), failed)))
		err := next(c)
		if err != nil {
			c.Error(err)
		}
		req := c.Request()
		fields := []zap.Field{
			zap.String("request_id", RequestID(c)),
			zap.String("method", req.Method),
			zap.String("path", req.URL.Path),
			zap.Int("status", c.Response().Status),
		}
		for _, f := range failed.take() {
			logFailure(s.logger, f, fields...)
		}
		s.logger.Info("http request", append(fields,
			zap.Duration("latency", time.Since(start)),
			zap.String("remote_addr", remoteHost(req.RemoteAddr)),
		)...)
		return nil
	}
}

// remoteHost is the peer's address without its port. X-Forwarded-For is not
// believed here: no proxy is trusted unless configured.
func remoteHost(addr string) string {
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return host
	}
	return addr
}
