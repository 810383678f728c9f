package web

import (
	"bytes"
	"crypto/subtle"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/standmeet/standmeet/internal/adapters/httpapi"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/owner/webhook"
)

var errNoAuth = domain.Unauthorized("UNAUTHORIZED", "sign-in is not available on this server")

// pages holds one parsed template set per page, each the layout plus the
// page's own file.
type pages struct {
	byName map[string]*template.Template
}

func parsePages() (*pages, error) {
	files, err := fs.Glob(assets, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("web: list templates: %w", err)
	}
	p := &pages{byName: map[string]*template.Template{}}
	// Partials (files named _*.html) define blocks any page may include.
	partials, err := fs.Glob(assets, "templates/_*.html")
	if err != nil {
		return nil, fmt.Errorf("web: list partials: %w", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(path.Base(f), ".html")
		if name == "layout" || strings.HasPrefix(name, "_") {
			continue
		}
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(assets, append([]string{"templates/layout.html", f}, partials...)...)
		if err != nil {
			return nil, fmt.Errorf("web: parse %s: %w", f, err)
		}
		p.byName[name] = t
	}
	return p, nil
}

var funcs = template.FuncMap{
	// disabledReason says why an endpoint is disabled beside a "Disabled"
	// badge: the reason without its own leading "disabled" ("by the
	// owner"), so the state is not said twice.
	"disabledReason": func(reason string) string {
		if rest, ok := strings.CutPrefix(reason, "disabled "); ok {
			return rest
		}
		return reason
	},
	// words turns an option's name into words: "signature_header" is
	// "Signature header".
	"words": func(name string) string {
		s := strings.ReplaceAll(name, "_", " ")
		if s == "" {
			return s
		}
		return strings.ToUpper(s[:1]) + s[1:]
	},
	"time": func(t any) string {
		switch v := t.(type) {
		case time.Time:
			if v.IsZero() {
				return "—"
			}
			return v.UTC().Format("2006-01-02 15:04:05 UTC")
		case *time.Time:
			if v == nil || v.IsZero() {
				return "—"
			}
			return v.UTC().Format("2006-01-02 15:04:05 UTC")
		default:
			return "—"
		}
	},
	"join": strings.Join,
	"list": func(s ...string) []string { return s },
	"contains": func(list []string, s string) bool {
		for _, x := range list {
			if x == s {
				return true
			}
		}
		return false
	},
	"deref": func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	},
}

// view is what every page template gets.
type view struct {
	Title string
	// Section is the navigation entry to mark as current.
	Section string
	Session *Session
	// Nav lists the sections this server has (their ops are declared).
	Nav    []navItem
	Notice string
	Error  *httpapi.ErrorDetail
	Data   any
	// Banner are the endpoints the banner of every page names: disabled
	// by the server, or failing for an hour.
	Banner []webhook.Attention
	// Forward is the way forward an error page offers (a refused action's
	// fix), nil for none.
	Forward *forward
}

// forward is the way forward of a refused action: a form that fixes what
// refused it, and the page to go back to.
type forward struct {
	Text, Action, Button, CSRF string
	// Back and BackLabel lead back to where the action came from.
	Back, BackLabel string
}

type navItem struct {
	Key, Label, Href string
}

// nav lists the sections this server declares; Tasks (River's UI) only for
// the operator, the one owner it answers.
func (h *Handler) nav(s *Session) []navItem {
	var items []navItem
	if h.has("webhooks.stats") || h.has("inbound_sources.stats") {
		items = append(items, navItem{"overview", "Overview", "/admin"})
	}
	if h.has("webhooks.list") {
		items = append(items, navItem{"webhooks", "Webhooks", "/admin/webhooks"})
	}
	if h.has("inbound_sources.list") {
		items = append(items, navItem{"inbound", "Inbound", "/admin/inbound"})
	}
	if h.has("events.list") && h.has("events.get") {
		items = append(items, navItem{"event-log", "Events", "/admin/events"})
	}
	if h.has("events.poisoned") {
		items = append(items, navItem{"events", "Poisoned events", "/admin/events/poisoned"})
	}
	if h.has("webhooks.event_types") {
		items = append(items, navItem{"catalog", "Event catalog", "/admin/event-types"})
	}
	if h.has("roles.list") {
		items = append(items, navItem{"access", "Access", "/admin/access/roles"})
	}
	items = append(items, h.ownerNav()...)
	if s != nil && s.Operator {
		items = append(items, navItem{"tasks", "Tasks", "/admin/tasks"})
	}
	return items
}

// render writes a page with status.
func (h *Handler) render(c echo.Context, status int, name string, v view) error {
	t, ok := h.pages.byName[name]
	if !ok {
		return fmt.Errorf("web: no page %q", name)
	}
	if v.Session != nil {
		v.Nav = h.nav(v.Session)
		v.Banner = h.banner(c, v.Session)
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout.html", v); err != nil {
		return fmt.Errorf("web: render %s: %w", name, err)
	}
	return c.HTMLBlob(status, buf.Bytes())
}

// fail renders err on the error page: a domain error with its status, code
// and message, anything else as a 500 whose detail goes to the log only.
func (h *Handler) fail(c echo.Context, s *Session, err error) error {
	status, detail := h.describe(c, err)
	return h.render(c, status, "error", view{Title: http.StatusText(status), Session: s, Error: detail})
}

// describe maps err to a status and the contract's error detail. What is
// not a domain error is reported to the request logger (httpapi.Fail), which
// logs it once with the request's fields; the page shows only the request id.
func (h *Handler) describe(c echo.Context, err error) (int, *httpapi.ErrorDetail) {
	if de := domain.AsError(err); de != nil && de.Kind != domain.KindInternal {
		return httpapi.StatusOf(de.Kind), &httpapi.ErrorDetail{Code: de.Code, Message: de.Message, Field: de.Field}
	}
	httpapi.Fail(c.Request().Context(), h.logger, err)
	return http.StatusInternalServerError, &httpapi.ErrorDetail{Code: "INTERNAL", Message: "Something went wrong on the server; the log has request " + httpapi.RequestID(c) + "."}
}

// page wraps a page handler: without a session the browser is sent to the
// sign-in form, which brings it back here.
func (h *Handler) page(fn func(c echo.Context, s *Session) error) echo.HandlerFunc {
	return func(c echo.Context) error {
		s, err := h.sessionOf(c.Request())
		if err != nil {
			return h.toLogin(c, c.Request().URL.RequestURI(), err)
		}
		return fn(c, s)
	}
}

// form wraps a form handler: the post must be same-origin, come with a
// session, and carry the session's CSRF token.
func (h *Handler) form(fn func(c echo.Context, s *Session) error) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := h.origin.Check(c.Request()); err != nil {
			return h.render(c, http.StatusForbidden, "error", view{Title: "Forbidden", Error: &httpapi.ErrorDetail{Code: "CROSS_ORIGIN", Message: "Cross-site form posts are refused."}})
		}
		s, err := h.sessionOf(c.Request())
		if err != nil {
			return h.toLogin(c, refererPath(c.Request()), err)
		}
		token := c.FormValue("csrf_token")
		if s.CSRFToken == "" || subtle.ConstantTimeCompare([]byte(token), []byte(s.CSRFToken)) != 1 {
			return h.render(c, http.StatusForbidden, "error", view{Title: "Forbidden", Session: s, Error: &httpapi.ErrorDetail{Code: "CSRF_TOKEN_INVALID",
				Message: "This form is out of date or did not come from this site. Go back, reload the page and try again."}})
		}
		return fn(c, s)
	}
}

// toLogin sends the browser to the sign-in form, to come back to next. An
// error other than "not signed in" is shown instead.
func (h *Handler) toLogin(c echo.Context, next string, err error) error {
	if de := domain.AsError(err); de == nil || de.Kind != domain.KindUnauthorized {
		return h.fail(c, nil, err)
	}
	return c.Redirect(http.StatusSeeOther, "/admin/login?next="+url.QueryEscape(LocalPath(next, "/admin/webhooks")))
}

// refererPath is where a form was posted from, so a post whose session has
// ended comes back to that page after sign-in (never to the post's own URL,
// which has no page).
func refererPath(r *http.Request) string {
	ref, err := url.Parse(r.Referer())
	if err != nil || ref.Host != r.Host {
		return ""
	}
	return ref.RequestURI()
}

// LocalPath returns next when it is a path on this site ("/admin/tasks?job=1"),
// else def: the sign-in form must not become an open redirect, so absolute
// URLs, scheme-relative ones ("//evil.test"), backslash tricks ("/\evil.test")
// and control characters are refused.
func LocalPath(next, def string) string {
	if next == "" || next[0] != '/' || len(next) > 2048 {
		return def
	}
	if strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") {
		return def
	}
	for _, r := range next {
		if r < 0x20 || r == 0x7f || r == '\\' {
			return def
		}
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" {
		return def
	}
	return next
}

// static serves the embedded CSS and JavaScript.
func (h *Handler) static(c echo.Context) error {
	name := path.Clean("static/" + c.Param("*"))
	if !strings.HasPrefix(name, "static/") {
		return h.notFound(c)
	}
	b, err := assets.ReadFile(name)
	if err != nil {
		return h.notFound(c)
	}
	ct := "application/octet-stream"
	switch path.Ext(name) {
	case ".css":
		ct = "text/css; charset=utf-8"
	case ".js":
		ct = "text/javascript; charset=utf-8"
	case ".svg":
		ct = "image/svg+xml"
	}
	c.Response().Header().Set("Cache-Control", "public, max-age=300")
	return c.Blob(http.StatusOK, ct, b)
}

// notFound is the answer of a section whose ops this server does not have.
func notDeclared(name string) error {
	return domain.NotFound("NOT_AVAILABLE", fmt.Sprintf("this server has no %s operation", name))
}

// isKind tells whether err is a domain error of kind k.
func isKind(err error, k domain.Kind) bool {
	var de *domain.Error
	return errors.As(err, &de) && de.Kind == k
}
