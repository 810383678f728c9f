package web

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/standmeet/standmeet/internal/domain/op"
	"github.com/standmeet/standmeet/internal/owner"
)

// browserSession is a session as owner.sessions lists it.
type browserSession struct {
	owner.SessionView
	// Current marks the session of this request.
	Current bool
}

type accountData struct {
	Me       owner.OwnerView
	Sessions []browserSession
	Bans     []owner.IPBanView
	Email    string
	CSRF     string
	// Form names the form an error belongs to ("email", "password").
	Form string
}

func (h *Handler) accountRender(c echo.Context, s *Session, status int, d accountData, err error) error {
	if h.owner == nil {
		return h.fail(c, s, notDeclared("owner.me"))
	}
	ctx := c.Request().Context()
	me, merr := h.owner.me.Call(ctx, s.Caller, op.Empty{})
	if merr != nil {
		return h.fail(c, s, merr)
	}
	d.Me = me
	sessions, serr := h.owner.sessions.Call(ctx, s.Caller, op.Empty{})
	if serr != nil {
		return h.fail(c, s, serr)
	}
	for _, x := range sessions.Data {
		d.Sessions = append(d.Sessions, browserSession{SessionView: x, Current: x.ID == s.ID})
	}
	bans, berr := h.owner.ipBans.Call(ctx, s.Caller, owner.ListBansInput{PageInput: op.PageInput{Limit: 100}})
	if berr != nil {
		return h.fail(c, s, berr)
	}
	d.Bans = bans.Data
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
	if h.owner == nil {
		return h.fail(c, s, notDeclared("owner.change_email"))
	}
	_, err := h.owner.changeEmail.Call(c.Request().Context(), s.Caller, owner.ChangeEmailInput{Email: email, CurrentPassword: c.FormValue("current_password")})
	if err != nil {
		return h.accountRender(c, s, 0, accountData{Email: email, Form: "email"}, err)
	}
	return c.Redirect(http.StatusSeeOther, "/admin/account?notice=email_changed")
}

// accountPassword changes the password; every session ends with it, this
// one included, so the browser goes to the sign-in form.
func (h *Handler) accountPassword(c echo.Context, s *Session) error {
	if h.owner == nil {
		return h.fail(c, s, notDeclared("owner.change_password"))
	}
	_, err := h.owner.changePassword.Call(c.Request().Context(), s.Caller, owner.ChangePasswordInput{
		CurrentPassword: c.FormValue("current_password"), NewPassword: c.FormValue("new_password"),
	})
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
	if h.owner == nil {
		return h.fail(c, s, notDeclared("owner.end_sessions"))
	}
	if _, err := h.owner.endSessions.Call(c.Request().Context(), s.Caller, op.Empty{}); err != nil {
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
	if h.owner == nil {
		return h.fail(c, s, notDeclared("ip_bans.lift"))
	}
	if _, err := h.owner.liftBan.Call(c.Request().Context(), s.Caller, owner.IDInput{ID: id}); err != nil {
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
	if h.owner == nil {
		return h.fail(c, s, notDeclared("owner.end_session"))
	}
	if _, err := h.owner.endSession.Call(c.Request().Context(), s.Caller, owner.IDInput{ID: id}); err != nil {
		return h.fail(c, s, err)
	}
	if id == s.ID {
		return c.Redirect(http.StatusSeeOther, "/admin/login?next=%2Fadmin%2Faccount")
	}
	return c.Redirect(http.StatusSeeOther, "/admin/account?notice=session_ended")
}

// accountUpgrade asks for the instance to be upgraded.
func (h *Handler) accountUpgrade(c echo.Context, s *Session) error {
	if h.owner == nil {
		return h.fail(c, s, notDeclared("instance.request_upgrade"))
	}
	in := owner.UpgradeInput{Note: strings.TrimSpace(c.FormValue("note"))}
	if _, err := h.owner.requestUpgrade.Call(c.Request().Context(), s.Caller, in); err != nil {
		return h.accountRender(c, s, 0, accountData{Form: "upgrade"}, err)
	}
	return c.Redirect(http.StatusSeeOther, "/admin/account?notice=upgrade_requested")
}
