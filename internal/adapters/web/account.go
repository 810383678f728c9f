package web

import (
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
)

// me is the owner as owner.me returns it.
type me struct {
	ID        uuid.UUID `json:"id"`
	Email     string    `json:"email"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// ipBan is an active ban as ip_bans.list returns it.
type ipBan struct {
	ID        uuid.UUID `json:"id"`
	IP        string    `json:"ip"`
	Reason    string    `json:"reason"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
}

// browserSession is a session as owner.sessions lists it.
type browserSession struct {
	ID        uuid.UUID `json:"id"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
	IP        string    `json:"ip"`
	UserAgent string    `json:"user_agent"`
	// Current marks the session of this request.
	Current bool `json:"-"`
}

type accountData struct {
	Me       me
	Sessions []browserSession
	Bans     []ipBan
	Email    string
	CSRF     string
	// Form names the form an error belongs to ("email", "password").
	Form string
}

func (h *Handler) accountRender(c echo.Context, s *Session, status int, d accountData, err error) error {
	if err := h.call(c.Request().Context(), s, "owner.me", nil, &d.Me); err != nil {
		return h.fail(c, s, err)
	}
	if h.has("owner.sessions") {
		var l struct {
			Data []browserSession `json:"data"`
		}
		if err := h.call(c.Request().Context(), s, "owner.sessions", nil, &l); err != nil {
			return h.fail(c, s, err)
		}
		for i := range l.Data {
			l.Data[i].Current = l.Data[i].ID == s.ID
		}
		d.Sessions = l.Data
	}
	if h.has("ip_bans.list") {
		var bans page[ipBan]
		if err := h.call(c.Request().Context(), s, "ip_bans.list", map[string]any{"limit": 100}, &bans); err != nil {
			return h.fail(c, s, err)
		}
		d.Bans = bans.Data
	}
	d.CSRF = s.CSRFToken
	v := view{Title: "Account", Section: "account", Session: s, Notice: notice(c), Data: d}
	if err != nil {
		status, v.Error = h.describe(c, err)
	}
	return h.render(c, status, "account", v)
}

func (h *Handler) accountPage(c echo.Context, s *Session) error {
	return h.accountRender(c, s, http.StatusOK, accountData{}, nil)
}

func (h *Handler) accountEmail(c echo.Context, s *Session) error {
	email := strings.TrimSpace(c.FormValue("email"))
	err := h.call(c.Request().Context(), s, "owner.change_email", map[string]any{"email": email, "current_password": c.FormValue("current_password")}, nil)
	if err != nil {
		return h.accountRender(c, s, 0, accountData{Email: email, Form: "email"}, err)
	}
	return c.Redirect(http.StatusSeeOther, "/admin/account?notice=email_changed")
}

// accountPassword changes the password; every session ends with it, this
// one included, so the browser goes to the sign-in form.
func (h *Handler) accountPassword(c echo.Context, s *Session) error {
	err := h.call(c.Request().Context(), s, "owner.change_password", map[string]any{
		"current_password": c.FormValue("current_password"), "new_password": c.FormValue("new_password"),
	}, nil)
	if err != nil {
		return h.accountRender(c, s, 0, accountData{Form: "password"}, err)
	}
	return c.Redirect(http.StatusSeeOther, "/admin/login?next=%2Fadmin%2Faccount")
}

// accountEndSessions signs out every browser after a confirmation step.
func (h *Handler) accountEndSessions(c echo.Context, s *Session) error {
	if !confirmed(c) {
		return h.confirm(c, s, "account", confirmData{
			Heading: "Sign out everywhere?", Action: "/admin/account/sessions/end", Button: "Sign out every session", Back: "/admin/account", Danger: true,
			Lines: []string{"Every browser signed in to this account is signed out, this one included; you sign in again afterwards. API keys keep working: revoke them on the API keys page."},
		})
	}
	if err := h.call(c.Request().Context(), s, "owner.end_sessions", nil, nil); err != nil {
		return h.fail(c, s, err)
	}
	return c.Redirect(http.StatusSeeOther, "/admin/login?next=%2Fadmin%2Faccount")
}

// accountLiftBan lifts one IP ban after a confirmation step.
func (h *Handler) accountLiftBan(c echo.Context, s *Session) error {
	id, err := routeID(c)
	if err != nil {
		return h.fail(c, s, err)
	}
	if !confirmed(c) {
		return h.confirm(c, s, "account", confirmData{
			Heading: "Lift this IP ban?", Action: "/admin/account/ip-bans/" + id.String() + "/lift", Button: "Lift ban", Back: "/admin/account",
			Lines: []string{"The address may try to sign in again at once; repeated failures ban it again."},
		})
	}
	if err := h.call(c.Request().Context(), s, "ip_bans.lift", map[string]any{"id": id}, nil); err != nil {
		return h.fail(c, s, err)
	}
	return c.Redirect(http.StatusSeeOther, "/admin/account?notice=ban_lifted")
}

// accountEndSession signs out one session after a confirmation step; ending
// this browser's own session leads to the sign-in form.
func (h *Handler) accountEndSession(c echo.Context, s *Session) error {
	id, err := routeID(c)
	if err != nil {
		return h.fail(c, s, err)
	}
	if !confirmed(c) {
		line := "That browser is signed out at once and has to sign in again."
		if id == s.ID {
			line = "This is the browser you are using: you are signed out at once and sign in again."
		}
		return h.confirm(c, s, "account", confirmData{
			Heading: "Sign out this session?", Action: "/admin/account/sessions/" + id.String() + "/end", Button: "Sign out session", Back: "/admin/account", Danger: true,
			Lines: []string{line},
		})
	}
	if err := h.call(c.Request().Context(), s, "owner.end_session", map[string]any{"id": id}, nil); err != nil {
		return h.fail(c, s, err)
	}
	if id == s.ID {
		return c.Redirect(http.StatusSeeOther, "/admin/login?next=%2Fadmin%2Faccount")
	}
	return c.Redirect(http.StatusSeeOther, "/admin/account?notice=session_ended")
}

// accountUpgrade asks for the instance to be upgraded.
func (h *Handler) accountUpgrade(c echo.Context, s *Session) error {
	args := map[string]any{}
	if note := strings.TrimSpace(c.FormValue("note")); note != "" {
		args["note"] = note
	}
	if err := h.call(c.Request().Context(), s, "instance.request_upgrade", args, nil); err != nil {
		return h.accountRender(c, s, 0, accountData{Form: "upgrade"}, err)
	}
	return c.Redirect(http.StatusSeeOther, "/admin/account?notice=upgrade_requested")
}
