package web

import (
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"go.uber.org/zap"

	"github.com/standmeet/standmeet/internal/access"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/owner/webhook"
)

// The Access pages: roles, codes, embeds and access requests, each calling
// the access domain's own ops. Every change goes through a form post; every
// deletion, revocation and rejection through a confirmation page.

// mountAccessPages registers the Access pages.
func (h *Handler) mountAccessPages(g *echo.Group) {
	g.GET("/access", h.page(func(c echo.Context, _ *Session) error {
		return c.Redirect(http.StatusSeeOther, "/admin/access/roles")
	}))
	g.GET("/access/roles", h.page(h.rolesPage))
	g.POST("/access/roles", h.form(h.roleCreate))
	g.GET("/access/roles/:id", h.page(h.roleShow))
	g.POST("/access/roles/:id", h.form(h.roleUpdate))
	g.POST("/access/roles/:id/delete", h.form(h.roleDelete))
	g.GET("/access/codes", h.page(h.codesPage))
	g.POST("/access/codes", h.form(h.codeIssue))
	g.GET("/access/codes/:id", h.page(h.codeShow))
	g.POST("/access/codes/:id/check", h.form(h.codeCheck))
	g.POST("/access/codes/:id/revoke", h.form(h.codeRevoke))
	g.GET("/access/embeds", h.page(h.embedsPage))
	g.POST("/access/embeds", h.form(h.embedCreate))
	g.GET("/access/embeds/:id", h.page(h.embedShow))
	g.POST("/access/embeds/:id/delete", h.form(h.embedDelete))
	g.GET("/access/requests", h.page(h.requestsPage))
	g.POST("/access/requests/:id/approve", h.form(h.requestApprove))
	g.POST("/access/requests/:id/reject", h.form(h.requestReject))
}

// accessData is what every Access page gets besides its own part.
type accessData struct {
	Tab  string
	CSRF string
	// Roles, Codes and Embeds are the owner's, for lists and choices.
	Roles  []access.RoleView
	Codes  []access.CodeView
	Embeds []access.EmbedView
	// RoleForm is the role form's values after a refusal.
	RoleForm roleForm
	// CodeForm is the issue form's values after a refusal.
	CodeForm codeForm
	// EmbedForm is the embed form's values after a refusal.
	EmbedForm access.EmbedInputView
	// Issued is a code just issued, shown this once.
	Issued *access.IssuedCodeView
	// Role, Code and Embed are the page's subject.
	Role  *access.RoleView
	Code  *access.CodeView
	Embed *access.EmbedView
	// RoleOfCode is the code page's role.
	RoleOfCode *access.RoleView
	// Check is the scope check's question and answer on a code's page.
	Check       *access.CheckView
	CheckURI    string
	CheckPublic bool
	// Endpoints are the webhook endpoints attached to the embed.
	Endpoints []webhook.View
	// Requests and Status are the access request queue and its filter.
	Requests []access.AccessRequestView
	Status   string
	// Approved is the request just approved with its code, shown once.
	Approved *access.ApprovedView
}

type roleForm struct {
	Name          string
	Globs         string
	PublishedOnly bool
}

type codeForm struct {
	RoleID    string
	Label     string
	DenyGlobs string
	ExpiresAt string
}

// accessPage renders one of the Access pages with status.
func (h *Handler) accessPage(c echo.Context, s *Session, status int, name, title string, d accessData, failure error) error {
	d.CSRF = s.CSRFToken
	v := view{Title: title, Section: "access", Session: s, Notice: notice(c), Data: d}
	if failure != nil {
		st, detail := h.describe(c, failure)
		status, v.Error = st, detail
	}
	return h.render(c, status, name, v)
}

func (h *Handler) accessOrFail(_ echo.Context, _ *Session) (*accessOps, error) {
	if h.access == nil {
		return nil, notDeclared("roles.list")
	}
	return h.access, nil
}

// accessRouteID is the route's id on an Access page of a server that has
// them.
func (h *Handler) accessRouteID(c echo.Context) (uuid.UUID, error) {
	if h.access == nil {
		return uuid.Nil, notDeclared("roles.list")
	}
	return routeID(c)
}

// lines splits a textarea into its trimmed, non-empty lines.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func (h *Handler) listRoles(c echo.Context, s *Session) ([]access.RoleView, error) {
	l, err := h.access.roles.Call(c.Request().Context(), s.Caller, op.Empty{})
	return l.Data, err
}

// listCodes returns the owner's codes, newest first, at most 200.
func (h *Handler) listCodes(c echo.Context, s *Session) ([]access.CodeView, error) {
	p, err := h.access.codes.Call(c.Request().Context(), s.Caller, op.PageInput{Limit: 200})
	return p.Data, err
}

func (h *Handler) listEmbeds(c echo.Context, s *Session) ([]access.EmbedView, error) {
	l, err := h.access.embeds.Call(c.Request().Context(), s.Caller, op.Empty{})
	return l.Data, err
}

// --- roles ---

func (h *Handler) rolesPage(c echo.Context, s *Session) error {
	return h.rolesRender(c, s, http.StatusOK, roleForm{}, nil)
}

func (h *Handler) rolesRender(c echo.Context, s *Session, status int, f roleForm, failure error) error {
	if _, err := h.accessOrFail(c, s); err != nil {
		return h.fail(c, s, err)
	}
	roles, err := h.listRoles(c, s)
	if err != nil {
		return h.fail(c, s, err)
	}
	codes, err := h.listCodes(c, s)
	if err != nil {
		return h.fail(c, s, err)
	}
	return h.accessPage(c, s, status, "access_roles", "Roles", accessData{Tab: "roles", Roles: roles, Codes: codes, RoleForm: f}, failure)
}

func roleFormOf(c echo.Context) roleForm {
	return roleForm{Name: strings.TrimSpace(c.FormValue("name")), Globs: c.FormValue("uri_globs"), PublishedOnly: c.FormValue("published_only") == "on"}
}

func (h *Handler) roleCreate(c echo.Context, s *Session) error {
	if _, err := h.accessOrFail(c, s); err != nil {
		return h.fail(c, s, err)
	}
	f := roleFormOf(c)
	r, err := h.access.createRole.Call(c.Request().Context(), s.Caller, access.RoleInputView{Name: f.Name, URIGlobs: lines(f.Globs), PublishedOnly: f.PublishedOnly})
	if err != nil {
		if isKind(err, domain.KindInternal) {
			return h.fail(c, s, err)
		}
		return h.rolesRender(c, s, 0, f, err)
	}
	return c.Redirect(http.StatusSeeOther, "/admin/access/roles/"+r.ID.String()+"?notice=role_created")
}

// roleByID finds the owner's role id (404 when it is another's or gone).
func (h *Handler) roleByID(c echo.Context, s *Session, id uuid.UUID) (access.RoleView, error) {
	roles, err := h.listRoles(c, s)
	if err != nil {
		return access.RoleView{}, err
	}
	for _, r := range roles {
		if r.ID == id {
			return r, nil
		}
	}
	return access.RoleView{}, domain.ErrNotFound
}

func (h *Handler) roleShow(c echo.Context, s *Session) error {
	return h.roleRender(c, s, http.StatusOK, nil, nil)
}

func (h *Handler) roleRender(c echo.Context, s *Session, status int, f *roleForm, failure error) error {
	id, err := h.accessRouteID(c)
	if err != nil {
		return h.fail(c, s, err)
	}
	r, err := h.roleByID(c, s, id)
	if err != nil {
		return h.fail(c, s, err)
	}
	codes, err := h.listCodes(c, s)
	if err != nil {
		return h.fail(c, s, err)
	}
	form := roleForm{Name: r.Name, Globs: strings.Join(r.URIGlobs, "\n"), PublishedOnly: r.PublishedOnly}
	if f != nil {
		form = *f
	}
	return h.accessPage(c, s, status, "access_role", "Role "+r.Name, accessData{Tab: "roles", Role: &r, Codes: codesOfRole(codes, r.ID), RoleForm: form}, failure)
}

func codesOfRole(codes []access.CodeView, roleID uuid.UUID) []access.CodeView {
	var out []access.CodeView
	for _, c := range codes {
		if c.RoleID == roleID {
			out = append(out, c)
		}
	}
	return out
}

func (h *Handler) roleUpdate(c echo.Context, s *Session) error {
	id, err := h.accessRouteID(c)
	if err != nil {
		return h.fail(c, s, err)
	}
	f := roleFormOf(c)
	globs := lines(f.Globs)
	if globs == nil {
		globs = []string{}
	}
	_, err = h.access.updateRole.Call(c.Request().Context(), s.Caller, access.RolePatchView{ID: id, Name: &f.Name, URIGlobs: &globs, PublishedOnly: &f.PublishedOnly})
	if err != nil {
		if isKind(err, domain.KindInternal) || isKind(err, domain.KindNotFound) {
			return h.fail(c, s, err)
		}
		return h.roleRender(c, s, 0, &f, err)
	}
	return c.Redirect(http.StatusSeeOther, "/admin/access/roles/"+id.String()+"?notice=role_updated")
}

func (h *Handler) roleDelete(c echo.Context, s *Session) error {
	id, err := h.accessRouteID(c)
	if err != nil {
		return h.fail(c, s, err)
	}
	r, err := h.roleByID(c, s, id)
	if err != nil {
		return h.fail(c, s, err)
	}
	if !confirmed(c) {
		codes, err := h.listCodes(c, s)
		if err != nil {
			return h.fail(c, s, err)
		}
		used := codesOfRole(codes, id)
		lines := []string{"The role " + r.Name + " is deleted; nothing else changes."}
		if len(used) > 0 {
			names := make([]string, 0, len(used))
			for _, k := range used {
				names = append(names, codeName(k))
			}
			lines = []string{"The role " + r.Name + " is used by " + plural(len(used), "code", "codes") + ": " + strings.Join(names, ", ") +
				". A role that a code uses cannot be deleted: revoke or let those codes expire and delete them first, or change the role instead."}
		}
		return h.confirm(c, s, "access", confirmData{
			Heading: "Delete role " + r.Name + "?", Action: "/admin/access/roles/" + id.String() + "/delete", Button: "Delete role",
			Back: "/admin/access/roles/" + id.String(), Danger: true, Lines: lines,
		})
	}
	if _, err := h.access.deleteRole.Call(c.Request().Context(), s.Caller, access.ID{ID: id}); err != nil {
		return h.fail(c, s, err)
	}
	return c.Redirect(http.StatusSeeOther, "/admin/access/roles?notice=role_deleted")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return itoa(n) + " " + many
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

func codeName(k access.CodeView) string {
	if k.Label != "" {
		return k.Label + " (" + k.Prefix + "…)"
	}
	return k.Prefix + "…"
}

// --- codes ---

func (h *Handler) codesPage(c echo.Context, s *Session) error {
	return h.codesRender(c, s, http.StatusOK, codeForm{RoleID: c.QueryParam("role")}, nil, nil)
}

func (h *Handler) codesRender(c echo.Context, s *Session, status int, f codeForm, issued *access.IssuedCodeView, failure error) error {
	if _, err := h.accessOrFail(c, s); err != nil {
		return h.fail(c, s, err)
	}
	roles, err := h.listRoles(c, s)
	if err != nil {
		return h.fail(c, s, err)
	}
	codes, err := h.listCodes(c, s)
	if err != nil {
		return h.fail(c, s, err)
	}
	title := "Access codes"
	if issued != nil {
		title = "Access code issued"
	}
	return h.accessPage(c, s, status, "access_codes", title, accessData{Tab: "codes", Roles: roles, Codes: codes, CodeForm: f, Issued: issued}, failure)
}

func codeFormOf(c echo.Context) codeForm {
	return codeForm{RoleID: strings.TrimSpace(c.FormValue("role_id")), Label: strings.TrimSpace(c.FormValue("label")),
		DenyGlobs: c.FormValue("deny_globs"), ExpiresAt: strings.TrimSpace(c.FormValue("expires_at"))}
}

// issueInput reads an issue form: the role, the label, deny globs one per
// line and an optional expiry (a date and time in UTC).
func (f codeForm) issueInput() (access.IssueInputView, error) {
	in := access.IssueInputView{Label: f.Label, DenyGlobs: lines(f.DenyGlobs)}
	id, err := uuid.Parse(f.RoleID)
	if err != nil {
		return in, domain.Validation("INVALID_ROLE", "choose a role for the code").WithField("role_id")
	}
	in.RoleID = id
	if f.ExpiresAt != "" {
		t, err := time.Parse("2006-01-02T15:04", f.ExpiresAt)
		if err != nil {
			return in, domain.Validation("INVALID_EXPIRES_AT", "the expiry is a date and time, e.g. 2027-01-31T18:00 (UTC)").WithField("expires_at")
		}
		t = t.UTC()
		in.ExpiresAt = &t
	}
	return in, nil
}

func (h *Handler) codeIssue(c echo.Context, s *Session) error {
	if _, err := h.accessOrFail(c, s); err != nil {
		return h.fail(c, s, err)
	}
	f := codeFormOf(c)
	in, err := f.issueInput()
	if err == nil {
		var issued access.IssuedCodeView
		issued, err = h.access.issueCode.Call(c.Request().Context(), s.Caller, in)
		if err == nil {
			// The value is in this answer only; the page replaces its
			// history entry with the list, so a reload does not show it.
			return h.codesRender(c, s, http.StatusCreated, codeForm{}, &issued, nil)
		}
	}
	if isKind(err, domain.KindInternal) {
		return h.fail(c, s, err)
	}
	return h.codesRender(c, s, 0, f, nil, err)
}

func (h *Handler) codeShow(c echo.Context, s *Session) error {
	return h.codeRender(c, s, http.StatusOK, nil, "", false, nil)
}

func (h *Handler) codeRender(c echo.Context, s *Session, status int, check *access.CheckView, uri string, published bool, failure error) error {
	id, err := h.accessRouteID(c)
	if err != nil {
		return h.fail(c, s, err)
	}
	k, err := h.access.getCode.Call(c.Request().Context(), s.Caller, access.ID{ID: id})
	if err != nil {
		return h.fail(c, s, err)
	}
	var role *access.RoleView
	if r, err := h.roleByID(c, s, k.RoleID); err == nil {
		role = &r
	} else if !isKind(err, domain.KindNotFound) {
		return h.fail(c, s, err)
	}
	embeds, err := h.listEmbeds(c, s)
	if err != nil {
		return h.fail(c, s, err)
	}
	var mine []access.EmbedView
	for _, e := range embeds {
		if e.CodeID == id {
			mine = append(mine, e)
		}
	}
	return h.accessPage(c, s, status, "access_code", "Access code "+codeName(k), accessData{Tab: "codes", Code: &k, RoleOfCode: role, Embeds: mine,
		Check: check, CheckURI: uri, CheckPublic: published}, failure)
}

func (h *Handler) codeCheck(c echo.Context, s *Session) error {
	id, err := h.accessRouteID(c)
	if err != nil {
		return h.fail(c, s, err)
	}
	uri := strings.TrimSpace(c.FormValue("uri"))
	published := c.FormValue("published") == "on"
	v, err := h.access.checkCode.Call(c.Request().Context(), s.Caller, access.CheckInputView{ID: id, URI: uri, Published: published})
	if err != nil {
		if isKind(err, domain.KindInternal) || isKind(err, domain.KindNotFound) {
			return h.fail(c, s, err)
		}
		return h.codeRender(c, s, 0, nil, uri, published, err)
	}
	return h.codeRender(c, s, http.StatusOK, &v, uri, published, nil)
}

func (h *Handler) codeRevoke(c echo.Context, s *Session) error {
	id, err := h.accessRouteID(c)
	if err != nil {
		return h.fail(c, s, err)
	}
	k, err := h.access.getCode.Call(c.Request().Context(), s.Caller, access.ID{ID: id})
	if err != nil {
		return h.fail(c, s, err)
	}
	if !confirmed(c) {
		return h.confirm(c, s, "access", confirmData{
			Heading: "Revoke access code " + codeName(k) + "?", Action: "/admin/access/codes/" + id.String() + "/revoke", Button: "Revoke code",
			Back: "/admin/access/codes/" + id.String(), Danger: true,
			Lines: []string{
				"The code stops working at once: a reader redeeming it is refused, and every embed of it admits nothing from now on.",
				"Webhook endpoints attached to those embeds stop receiving corpus events at once, deliveries already queued included: each is checked against the code when it runs.",
				"This cannot be undone; issue a new code to give access again.",
			},
		})
	}
	if _, err := h.access.revokeCode.Call(c.Request().Context(), s.Caller, access.ID{ID: id}); err != nil {
		return h.fail(c, s, err)
	}
	return c.Redirect(http.StatusSeeOther, "/admin/access/codes/"+id.String()+"?notice=code_revoked")
}

// --- embeds ---

func (h *Handler) embedsPage(c echo.Context, s *Session) error {
	return h.embedsRender(c, s, http.StatusOK, access.EmbedInputView{}, nil)
}

func (h *Handler) embedsRender(c echo.Context, s *Session, status int, f access.EmbedInputView, failure error) error {
	if _, err := h.accessOrFail(c, s); err != nil {
		return h.fail(c, s, err)
	}
	embeds, err := h.listEmbeds(c, s)
	if err != nil {
		return h.fail(c, s, err)
	}
	codes, err := h.listCodes(c, s)
	if err != nil {
		return h.fail(c, s, err)
	}
	return h.accessPage(c, s, status, "access_embeds", "Embeds", accessData{Tab: "embeds", Embeds: embeds, Codes: codes, EmbedForm: f}, failure)
}

func (h *Handler) embedCreate(c echo.Context, s *Session) error {
	if _, err := h.accessOrFail(c, s); err != nil {
		return h.fail(c, s, err)
	}
	f := access.EmbedInputView{Name: strings.TrimSpace(c.FormValue("name"))}
	id, err := uuid.Parse(strings.TrimSpace(c.FormValue("code_id")))
	if err != nil {
		return h.embedsRender(c, s, 0, f, domain.Validation("INVALID_CODE", "choose the access code the embed exposes").WithField("code_id"))
	}
	f.CodeID = id
	e, err := h.access.createEmbed.Call(c.Request().Context(), s.Caller, f)
	if err != nil {
		if isKind(err, domain.KindInternal) {
			return h.fail(c, s, err)
		}
		return h.embedsRender(c, s, 0, f, err)
	}
	return c.Redirect(http.StatusSeeOther, "/admin/access/embeds/"+e.ID.String()+"?notice=embed_created")
}

// embedByID finds the owner's embed id (404 when it is another's or gone).
func (h *Handler) embedByID(c echo.Context, s *Session, id uuid.UUID) (access.EmbedView, error) {
	embeds, err := h.listEmbeds(c, s)
	if err != nil {
		return access.EmbedView{}, err
	}
	for _, e := range embeds {
		if e.ID == id {
			return e, nil
		}
	}
	return access.EmbedView{}, domain.ErrNotFound
}

// endpointsOfEmbed lists the owner's webhook endpoints attached to the embed.
func (h *Handler) endpointsOfEmbed(c echo.Context, s *Session, id uuid.UUID) ([]webhook.View, error) {
	if h.webhooks == nil {
		return nil, nil
	}
	var out []webhook.View
	in := webhook.ListInput{PageInput: op.PageInput{Limit: 200}}
	for range 50 {
		p, err := h.webhooks.list.Call(c.Request().Context(), s.Caller, in)
		if err != nil {
			return nil, err
		}
		for _, e := range p.Data {
			if e.EmbedID != nil && *e.EmbedID == id {
				out = append(out, e)
			}
		}
		if p.NextCursor == nil {
			break
		}
		in.Cursor = *p.NextCursor
	}
	return out, nil
}

func (h *Handler) embedShow(c echo.Context, s *Session) error {
	id, err := h.accessRouteID(c)
	if err != nil {
		return h.fail(c, s, err)
	}
	e, err := h.embedByID(c, s, id)
	if err != nil {
		return h.fail(c, s, err)
	}
	eps, err := h.endpointsOfEmbed(c, s, id)
	if err != nil {
		return h.fail(c, s, err)
	}
	var code *access.CodeView
	if k, err := h.access.getCode.Call(c.Request().Context(), s.Caller, access.ID{ID: e.CodeID}); err == nil {
		code = &k
	} else if !isKind(err, domain.KindNotFound) {
		return h.fail(c, s, err)
	}
	return h.accessPage(c, s, http.StatusOK, "access_embed", "Embed "+e.Name, accessData{Tab: "embeds", Embed: &e, Code: code, Endpoints: eps}, nil)
}

func (h *Handler) embedDelete(c echo.Context, s *Session) error {
	id, err := h.accessRouteID(c)
	if err != nil {
		return h.fail(c, s, err)
	}
	e, err := h.embedByID(c, s, id)
	if err != nil {
		return h.fail(c, s, err)
	}
	if !confirmed(c) {
		eps, err := h.endpointsOfEmbed(c, s, id)
		if err != nil {
			return h.fail(c, s, err)
		}
		lines := []string{"The embed " + e.Name + " is deleted and admits nothing from now on; its code keeps working where it is used directly."}
		if len(eps) > 0 {
			lines = append(lines, plural(len(eps), "webhook endpoint is", "webhook endpoints are")+" attached to it: they stay, but receive no corpus event until attached to another embed or made standalone.")
		}
		return h.confirm(c, s, "access", confirmData{
			Heading: "Delete embed " + e.Name + "?", Action: "/admin/access/embeds/" + id.String() + "/delete", Button: "Delete embed",
			Back: "/admin/access/embeds/" + id.String(), Danger: true, Lines: lines,
		})
	}
	if _, err := h.access.deleteEmbed.Call(c.Request().Context(), s.Caller, access.ID{ID: id}); err != nil {
		return h.fail(c, s, err)
	}
	return c.Redirect(http.StatusSeeOther, "/admin/access/embeds?notice=embed_deleted")
}

// --- access requests ---

func (h *Handler) requestsPage(c echo.Context, s *Session) error {
	return h.requestsRender(c, s, http.StatusOK, nil, nil)
}

func (h *Handler) requestsRender(c echo.Context, s *Session, status int, approved *access.ApprovedView, failure error) error {
	if _, err := h.accessOrFail(c, s); err != nil {
		return h.fail(c, s, err)
	}
	st := c.QueryParam("status")
	if st == "" && c.Request().Method == http.MethodGet {
		st = string(access.RequestPending)
	}
	if st == "all" {
		st = ""
	}
	p, err := h.access.requests.Call(c.Request().Context(), s.Caller, access.ListRequestsInput{PageInput: op.PageInput{Limit: 200}, Status: access.RequestStatus(st)})
	if err != nil {
		return h.fail(c, s, err)
	}
	roles, err := h.listRoles(c, s)
	if err != nil {
		return h.fail(c, s, err)
	}
	if st == "" {
		st = "all"
	}
	return h.accessPage(c, s, status, "access_requests", "Access requests", accessData{Tab: "requests", Requests: p.Data, Roles: roles, Status: st, Approved: approved}, failure)
}

func (h *Handler) requestApprove(c echo.Context, s *Session) error {
	id, err := h.accessRouteID(c)
	if err != nil {
		return h.fail(c, s, err)
	}
	f := codeFormOf(c)
	in, err := f.issueInput()
	if err == nil {
		var a access.ApprovedView
		a, err = h.access.approve.Call(c.Request().Context(), s.Caller, access.ApproveInputView{ID: id, IssueInputView: in})
		if err == nil {
			return h.requestsRender(c, s, http.StatusCreated, &a, nil)
		}
	}
	if isKind(err, domain.KindInternal) || isKind(err, domain.KindNotFound) {
		return h.fail(c, s, err)
	}
	return h.requestsRender(c, s, 0, nil, err)
}

func (h *Handler) requestReject(c echo.Context, s *Session) error {
	id, err := h.accessRouteID(c)
	if err != nil {
		return h.fail(c, s, err)
	}
	if !confirmed(c) {
		return h.confirm(c, s, "access", confirmData{
			Heading: "Reject this access request?", Action: "/admin/access/requests/" + id.String() + "/reject", Button: "Reject request",
			Back: "/admin/access/requests", Danger: true,
			Lines: []string{"The request is marked rejected and no code is issued. The person is not told by this server; a new request from them arrives as a new entry."},
		})
	}
	if _, err := h.access.reject.Call(c.Request().Context(), s.Caller, access.ID{ID: id}); err != nil {
		return h.fail(c, s, err)
	}
	return c.Redirect(http.StatusSeeOther, "/admin/access/requests?notice=request_rejected")
}

// accessNotice says what an Access action did; "" for another notice.
func accessNotice(key string) string {
	switch key {
	case "role_created":
		return "Role created. Issue a code for it under Codes."
	case "role_updated":
		return "Role updated: every code of it follows at once."
	case "role_deleted":
		return "Role deleted."
	case "code_revoked":
		return "Code revoked: it and every embed of it admit nothing from now on."
	case "embed_created":
		return "Embed created. Attach webhook endpoints to it from their create or edit form (Scope)."
	case "embed_deleted":
		return "Embed deleted: it admits nothing from now on."
	case "request_rejected":
		return "Request rejected."
	}
	return ""
}

// RoleName is the name of the owner's role id, for lists of codes.
func (d accessData) RoleName(id uuid.UUID) string {
	for _, r := range d.Roles {
		if r.ID == id {
			return r.Name
		}
	}
	return "—"
}

// scopeChoices are the owner's embeds, which the endpoint forms offer as
// scopes beside standalone; nil when there are no access pages or the list
// fails (the form then takes a typed embed id, and the failure is logged).
func (h *Handler) scopeChoices(c echo.Context, s *Session) []access.EmbedView {
	if h.access == nil {
		return nil
	}
	embeds, err := h.listEmbeds(c, s)
	if err != nil {
		h.logger.Warn("endpoint form: embeds not listed", zap.Error(err))
		return nil
	}
	if embeds == nil {
		embeds = []access.EmbedView{}
	}
	return embeds
}
