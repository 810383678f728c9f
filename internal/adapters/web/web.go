// Package web is the admin web UI: server-rendered html/template pages,
// embedded in the binary with go:embed, with a little JavaScript that only
// improves them (copy buttons, live delivery log). Every page works without
// JavaScript.
//
// The UI implements no op of its own. Each page calls the declared ops
// through typed handles (op.Handle, with the domains' own input and output
// types and the caller of the request's session), resolved once in New: a
// section whose ops are declared but one is missing or has other types
// stops the start, naming the op. The handles run every input through the
// same gate as REST and MCP. Sign-in, sessions and CSRF tokens come from the
// owner domain through the functions in Auth.
//
// Routes, under /admin: login and logout; the overview at /admin itself
// (the landing page: what needs the owner and the health charts; a banner
// on every page names the endpoints disabled or failing for an hour);
// Integrations → Webhooks (list,
// create with a one-time secret, endpoint page with the delivery log, test,
// redeliver, enable/disable, rotate, delete), Inbound (sources, create with a
// one-time secret, message log, dead letters and replay) and Events
// (poisoned events and release); the owner's pages (first.go and the files
// beside it): account, API keys, notes, supplier connections, inbound source
// edit and delete, message detail and replay of every dead letter. Every
// rotation, revocation and delete answers a post without confirm=yes with a
// confirmation page. / leads to the admin and unknown /admin paths get an
// HTML 404. River's own UI at /admin/tasks is mounted by the HTTP server
// (BackLink puts a link back to the admin on its page); the login page
// brings the owner back to it through next.
package web

import (
	"context"
	"embed"
	"net/http"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"go.uber.org/zap"

	"github.com/standmeet/standmeet/internal/adapters/httpapi"
	"github.com/standmeet/standmeet/internal/domain/op"
)

//go:embed templates/*.html static/*
var assets embed.FS

// Session is the admin session a request carries.
type Session struct {
	// Caller is who the ops act for.
	Caller op.Caller
	// CSRFToken is the token bound to the session that every form posts back
	// in the csrf_token field.
	CSRFToken string
	// ID is the session's id (the account page marks it among the owner's
	// sessions); uuid.Nil when unknown.
	ID uuid.UUID
	// Operator is true when the owner holds the operator role: only the
	// operator reaches River's UI, so only the operator sees its link.
	Operator bool
}

// LoginFunc checks email and password and, when they are right, opens a
// session and sets its cookie on w. A refusal is a domain error
// (INVALID_CREDENTIALS, RATE_LIMITED, IP_BANNED, …) whose message the form
// shows.
type LoginFunc func(w http.ResponseWriter, r *http.Request, email, password string) error

// LogoutFunc ends the request's session, if any, and clears its cookie.
type LogoutFunc func(w http.ResponseWriter, r *http.Request) error

// SessionFunc returns the session of the request's cookie, or a domain
// Unauthorized error when there is none or it has ended.
type SessionFunc func(r *http.Request) (Session, error)

// Auth is what the UI needs from the owner domain's session handling.
type Auth struct {
	Login   LoginFunc
	Logout  LogoutFunc
	Session SessionFunc
	// HasOwners tells whether the instance has an owner yet; without one
	// the sign-in page says how to create the first. Nil: assume one.
	HasOwners func(ctx context.Context) (bool, error)
}

// Deps is what the UI is built from.
type Deps struct {
	// Ops are every declared op; New resolves each page's typed handles
	// in them, and a section whose ops are not declared is left out of the
	// navigation.
	Ops    op.Set
	Auth   Auth
	Logger *zap.Logger
}

// Handler serves the admin UI.
type Handler struct {
	ops op.Set
	// owner are the account and API key pages' ops; nil when the set has
	// no account section.
	owner *ownerOps
	// notes are the note pages' ops; nil when the set has no notes
	// section.
	notes *noteOps
	// suppliers are the supplier pages' ops; nil when the set has no
	// supplier section.
	suppliers *supplierOps
	// webhooks are the webhook pages' ops; nil when the set has no webhook
	// section.
	webhooks *webhookOps
	// inbound are the inbound pages' ops; nil when the set has no inbound
	// section.
	inbound *inboundOps
	// events are the event, catalog and job pages' ops.
	events *eventOps
	// health are the overview's, the charts' and the banner's ops.
	health *healthOps
	// access are the Access pages' ops; nil when the set has no access
	// section.
	access *accessOps
	auth   Auth
	logger *zap.Logger
	pages  *pages
	// origin rejects cross-site form posts before any token is compared.
	origin *http.CrossOriginProtection
}

// New parses the embedded templates and builds the UI. It fails, naming
// the op, when the set declares a section — account (owner.me), notes
// (notes.list), suppliers (supplier_connections.list), webhooks
// (webhooks.list), inbound (inbound_sources.list), the event log
// (events.list), poisoned events (events.poisoned), access (roles.list) — without every op its
// pages call, or any op a page calls with other types.
func New(d Deps) (*Handler, error) {
	if d.Logger == nil {
		d.Logger = zap.NewNop()
	}
	p, err := parsePages()
	if err != nil {
		return nil, err
	}
	owner, err := ownerOpsOf(d.Ops)
	if err != nil {
		return nil, err
	}
	notes, err := noteOpsOf(d.Ops)
	if err != nil {
		return nil, err
	}
	suppliers, err := supplierOpsOf(d.Ops)
	if err != nil {
		return nil, err
	}
	webhooks, err := webhookOpsOf(d.Ops)
	if err != nil {
		return nil, err
	}
	inbound, err := inboundOpsOf(d.Ops)
	if err != nil {
		return nil, err
	}
	events, err := eventOpsOf(d.Ops)
	if err != nil {
		return nil, err
	}
	health, err := healthOpsOf(d.Ops)
	if err != nil {
		return nil, err
	}
	accessSection, err := accessOpsOf(d.Ops)
	if err != nil {
		return nil, err
	}
	return &Handler{
		ops: d.Ops, owner: owner, notes: notes, suppliers: suppliers, webhooks: webhooks, inbound: inbound, events: events, health: health, access: accessSection, auth: d.Auth, logger: d.Logger.Named("web"), pages: p,
		origin: http.NewCrossOriginProtection(),
	}, nil
}

var _ httpapi.Mounter = (*Handler)(nil)

// Mount registers the UI's routes.
func (h *Handler) Mount(e *echo.Echo) {
	g := e.Group("/admin", h.headers)
	g.GET("", h.page(h.overview))
	g.GET("/", h.page(h.overview))
	g.GET("/static/*", h.static)
	g.GET("/login", h.loginForm)
	g.GET("/forgot", h.forgot)
	g.POST("/login", h.login)
	g.POST("/logout", h.form(h.logout))

	g.GET("/webhooks", h.page(h.webhookList))
	g.GET("/webhooks/new", h.page(h.webhookNew))
	g.POST("/webhooks", h.form(h.webhookCreate))
	g.GET("/webhooks/:id", h.page(h.webhookShow))
	g.POST("/webhooks/:id/test", h.form(h.webhookTest))
	g.POST("/webhooks/:id/redeliver", h.form(h.webhookRedeliver))
	g.POST("/webhooks/:id/recover", h.form(h.webhookRecover))
	g.GET("/webhooks/:id/deliveries/:job", h.page(h.deliveryShow))
	g.POST("/webhooks/:id/deliveries/:job/retry", h.form(h.deliverySteer(false, "retried")))
	g.POST("/webhooks/:id/deliveries/:job/resend", h.form(h.deliverySteer(true, "resent")))
	g.POST("/webhooks/:id/enable", h.form(h.webhookEnable))
	g.POST("/webhooks/:id/disable", h.form(h.webhookDisable))
	g.POST("/webhooks/:id/rotate", h.form(h.webhookRotate))
	g.GET("/webhooks/:id/edit", h.page(h.webhookEdit))
	g.POST("/webhooks/:id/edit", h.form(h.webhookUpdate))
	g.GET("/webhooks/:id/delete", h.page(h.webhookDeleteConfirm))
	g.POST("/webhooks/:id/delete", h.form(h.webhookDelete))

	g.GET("/inbound", h.page(h.inboundList))
	g.GET("/inbound/new", h.page(h.inboundNew))
	g.POST("/inbound", h.form(h.inboundCreate))
	g.GET("/inbound/:id", h.page(h.inboundShow))
	g.POST("/inbound/:id/rotate", h.form(h.inboundRotate))
	g.POST("/inbound/:id/enable", h.form(h.inboundEnable))
	g.POST("/inbound/:id/disable", h.form(h.inboundDisable))
	g.POST("/inbound/:id/dead-letters/:message_id/replay", h.form(h.deadLetterReplay))

	g.GET("/events", h.page(h.eventList))
	g.GET("/events/poisoned", h.page(h.poisonedList))
	g.GET("/events/:id", h.page(h.eventShow))
	g.GET("/event-types", h.page(h.eventCatalog))
	g.POST("/events/:id/release", h.form(h.eventRelease))

	g.GET("/jobs/:id", h.page(h.jobShow))
	h.mountAccessPages(g)
	h.mountOwnerPages(e, g)
}

// headers are the security headers of every UI response: no framing, no
// inline script, forms post only here, nothing cached (pages show secrets
// once and owner data always).
func (h *Handler) headers(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		hd := c.Response().Header()
		hd.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "+
			"connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'; object-src 'none'")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Referrer-Policy", "same-origin")
		hd.Set("Cache-Control", "no-store")
		return next(c)
	}
}

// sessionOf returns the request's session.
func (h *Handler) sessionOf(r *http.Request) (*Session, error) {
	if h.auth.Session == nil {
		return nil, errNoAuth
	}
	s, err := h.auth.Session(r)
	if err != nil {
		return nil, err
	}
	return &s, nil
}

// has tells whether an op is declared (sections without their ops are left
// out of the navigation and answer 404).
func (h *Handler) has(name string) bool {
	_, ok := h.ops.Find(name)
	return ok
}
