package web

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/standmeet/standmeet/internal/adapters/httpapi"
)

// mountOwnerPages registers the first-contact routes (/, the HTML 404 of
// /admin) and the owner's pages: account, API keys, notes, supplier
// connections, and the inbound source and message pages beyond the list.
// Every rotation and delete posts to a route that answers with a
// confirmation page unless the post carries confirm=yes.
func (h *Handler) mountOwnerPages(e *echo.Echo, g *echo.Group) {
	e.GET("/", h.root)
	g.RouteNotFound("/*", h.notFound)

	g.GET("/account", h.page(h.accountPage))
	g.POST("/account/email", h.form(h.accountEmail))
	g.POST("/account/password", h.form(h.accountPassword))
	g.POST("/account/sessions/end", h.form(h.accountEndSessions))
	g.POST("/account/sessions/:id/end", h.form(h.accountEndSession))
	g.POST("/account/ip-bans/:id/lift", h.form(h.accountLiftBan))
	g.POST("/account/upgrade", h.form(h.accountUpgrade))

	g.GET("/api-keys", h.page(h.apiKeysPage))
	g.POST("/api-keys", h.form(h.apiKeyIssue))
	g.POST("/api-keys/:id/revoke", h.form(h.apiKeyRevoke))

	g.GET("/notes", h.page(h.notesList))
	g.GET("/notes/new", h.page(h.noteNew))
	g.POST("/notes", h.form(h.noteCreate))
	g.GET("/notes/:id", h.page(h.noteShow))
	g.POST("/notes/:id", h.form(h.noteUpdate))
	g.POST("/notes/:id/publish", h.form(h.notePublish))
	g.POST("/notes/:id/unpublish", h.form(h.noteUnpublish))
	g.POST("/notes/:id/delete", h.form(h.noteDelete))
	g.POST("/notes/:id/move", h.form(h.noteMove))

	g.GET("/suppliers", h.page(h.suppliersPage))
	g.POST("/suppliers", h.form(h.supplierCreate))
	g.POST("/suppliers/:id/delete", h.form(h.supplierDelete))

	g.GET("/inbound/:id/edit", h.page(h.inboundEdit))
	g.POST("/inbound/:id/edit", h.form(h.inboundUpdate))
	g.POST("/inbound/:id/delete", h.form(h.inboundDelete))
	g.POST("/inbound/:id/dead-letters/replay", h.form(h.deadLettersReplay))
	g.GET("/inbound/:id/messages/:message_id", h.page(h.inboundMessage))
}

// root sends a visitor of / to the admin: the server has no other page
// there, and the admin's sign-in form says what to do next.
func (h *Handler) root(c echo.Context) error {
	return c.Redirect(http.StatusSeeOther, "/admin")
}

// NotFound is the admin's not-found page (404, HTML, inside the admin when
// signed in): the server answers with it where an admin path has nothing
// for this owner, such as River's UI for anyone but the operator.
func (h *Handler) NotFound(c echo.Context) error { return h.notFound(c) }

// notFound answers every /admin path no route serves with an HTML page (the
// JSON error shape stays for /api).
func (h *Handler) notFound(c echo.Context) error {
	s, err := h.sessionOf(c.Request())
	if err != nil {
		s = nil
	}
	return h.render(c, http.StatusNotFound, "error", view{Title: "Page not found", Session: s, Error: &httpapi.ErrorDetail{
		Code: "NOT_FOUND", Message: "There is no admin page at " + c.Request().URL.Path + ".",
	}})
}

// ownerNav are the navigation entries of the owner's own pages, each shown
// when its ops are declared.
func (h *Handler) ownerNav() []navItem {
	var items []navItem
	if h.has("supplier_connections.list") {
		items = append(items, navItem{"suppliers", "Suppliers", "/admin/suppliers"})
	}
	if h.has("notes.list") {
		items = append(items, navItem{"notes", "Notes", "/admin/notes"})
	}
	if h.has("api_keys.list") {
		items = append(items, navItem{"api-keys", "API keys", "/admin/api-keys"})
	}
	if h.has("owner.me") {
		items = append(items, navItem{"account", "Account", "/admin/account"})
	}
	return items
}

// confirmData is the generic confirmation page: what will happen, a form
// that posts confirm=yes to Action with the given fields, and a way back.
type confirmData struct {
	Heading, Action, Button, Back string
	// Lines say what the action does, one paragraph each.
	Lines []string
	// Fields are extra hidden fields posted with the confirmation.
	Fields map[string]string
	// Secret asks for a new provider secret (inbound kinds whose secret
	// the provider sets).
	Secret bool
	Danger bool
	CSRF   string
}

// confirmed tells whether a form post carries the confirmation step's
// confirm=yes; posts without it are answered with the confirmation page.
func confirmed(c echo.Context) bool {
	return c.FormValue("confirm") == "yes"
}

func (h *Handler) confirm(c echo.Context, s *Session, section string, d confirmData) error {
	d.CSRF = s.CSRFToken
	return h.render(c, http.StatusOK, "confirm", view{Title: d.Heading, Section: section, Session: s, Data: d})
}

// BackLink wraps River's UI so that its HTML page carries a fixed link back
// to the admin; every other response passes through unchanged.
func BackLink(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			next.ServeHTTP(w, r)
			return
		}
		bw := &linkWriter{ResponseWriter: w}
		next.ServeHTTP(bw, r)
		bw.finish()
	})
}

// StartOnFirstRequest wraps a handler whose background work is worth
// running only once somebody uses it, as River UI's job counts are (each a
// scan of river_job, every few seconds, in every process). start runs
// before the first request is served, once it succeeds; requests that come
// while it runs wait for it. A failed start goes to failed and the request
// is served all the same, since the handler answers without its background
// work, only by querying at once; the next request starts it again.
func StartOnFirstRequest(next http.Handler, start func() error, failed func(error)) http.Handler {
	var (
		mu      sync.Mutex
		started bool
	)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if !started {
			if err := start(); err != nil {
				failed(err)
			} else {
				started = true
			}
		}
		mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

// backLinkHTML is the link put into River UI's page, styled inline because
// River UI's stylesheet knows nothing of it.
const backLinkHTML = `<a id="standmeet-admin-link" href="/admin" style="position:fixed;right:.75rem;bottom:.75rem;z-index:2147483647;` +
	`background:#0b57d0;color:#fff;padding:.4rem .75rem;border-radius:6px;font:14px/1.4 system-ui,sans-serif;text-decoration:none">` +
	`&larr; StandMeet admin</a>`

// linkWriter buffers an HTML 200 answer to insert the link before </body>.
type linkWriter struct {
	http.ResponseWriter
	status int
	html   bool
	buf    bytes.Buffer
}

func (w *linkWriter) WriteHeader(status int) {
	if w.status != 0 {
		return
	}
	w.status = status
	w.html = status == http.StatusOK && strings.HasPrefix(w.Header().Get("Content-Type"), "text/html")
	if !w.html {
		w.ResponseWriter.WriteHeader(status)
	}
}

func (w *linkWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", http.DetectContentType(b))
		}
		w.WriteHeader(http.StatusOK)
	}
	if w.html {
		return w.buf.Write(b)
	}
	return w.ResponseWriter.Write(b)
}

// Flush passes through for streamed answers (never the buffered page).
func (w *linkWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok && !w.html {
		f.Flush()
	}
}

func (w *linkWriter) finish() {
	if !w.html {
		return
	}
	page := w.buf.Bytes()
	if i := bytes.LastIndex(page, []byte("</body>")); i >= 0 {
		page = append(page[:i:i], append([]byte(backLinkHTML), page[i:]...)...)
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(page)))
	w.Header().Del("Content-Range")
	w.ResponseWriter.WriteHeader(http.StatusOK)
	if _, err := w.ResponseWriter.Write(page); err != nil {
		// The client went away; there is nobody to tell.
		return
	}
}

// moreNotices are the confirmations of the owner's pages (see notice).
func moreNotices(key string, digits func(string) string) string {
	if n := accessNotice(key); n != "" {
		return n
	}
	switch key {
	case "key_revoked":
		return "API key revoked: requests made with it are refused from now on."
	case "email_changed":
		return "Email changed."
	case "session_ended":
		return "Session signed out."
	case "ban_lifted":
		return "IP ban lifted."
	case "note_saved":
		return "Note saved."
	case "note_published":
		return "Note published."
	case "note_unpublished":
		return "Note unpublished."
	case "note_moved":
		return "Note moved."
	case "upgrade_requested":
		return "Upgrade requested."
	case "note_deleted":
		return "Note deleted."
	case "supplier_connected":
		return "Supplier connected: the first verified message on its source activates it."
	case "supplier_removed":
		return "Supplier connection removed; its source stays."
	case "source_saved":
		return "Source saved."
	case "source_deleted":
		return "Source deleted with its inbox."
	case "replayed_all":
		return digits("count") + " dead letters replayed: they are queued for processing again."
	}
	return ""
}
