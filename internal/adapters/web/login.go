package web

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/standmeet/standmeet/internal/adapters/httpapi"
	"github.com/standmeet/standmeet/internal/domain"
)

// loginCookie carries the sign-in form's CSRF token (double submit): before
// sign-in there is no session to bind a token to, and a forged sign-in would
// put the owner's browser in an attacker's session.
const loginCookie = "standmeet_login_csrf"

type loginData struct {
	Email string
	Next  string
	Token string
	// NoOwner is true while the instance has no owner: nobody can sign in
	// until the operator creates one.
	NoOwner bool
}

// noOwner tells whether the instance has no owner yet (sign-in cannot
// succeed until one is created).
func (h *Handler) noOwner(c echo.Context) (bool, error) {
	if h.auth.HasOwners == nil {
		return false, nil
	}
	has, err := h.auth.HasOwners(c.Request().Context())
	return !has, err
}

// forgot says how a locked-out owner gets back in on this instance: it
// sends no mail, so the operator resets the password with the CLI.
func (h *Handler) forgot(c echo.Context) error {
	return h.render(c, http.StatusOK, "forgot", view{Title: "Forgot password"})
}

func (h *Handler) loginForm(c echo.Context) error {
	next := LocalPath(c.QueryParam("next"), "/admin/webhooks")
	if _, err := h.sessionOf(c.Request()); err == nil {
		return c.Redirect(http.StatusSeeOther, next)
	}
	token, err := h.loginToken(c)
	if err != nil {
		return h.fail(c, nil, err)
	}
	none, err := h.noOwner(c)
	if err != nil {
		return h.fail(c, nil, err)
	}
	return h.render(c, http.StatusOK, "login", view{Title: "Sign in", Data: loginData{Next: next, Token: token, NoOwner: none}})
}

// loginToken returns the sign-in form's token, setting its cookie when the
// browser has none yet.
func (h *Handler) loginToken(c echo.Context) (string, error) {
	if ck, err := c.Cookie(loginCookie); err == nil && len(ck.Value) >= 32 {
		return ck.Value, nil
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	token := base64.RawURLEncoding.EncodeToString(b)
	c.SetCookie(&http.Cookie{
		Name: loginCookie, Value: token, Path: "/admin/login",
		HttpOnly: true, Secure: secure(c), SameSite: http.SameSiteStrictMode, MaxAge: 3600,
	})
	return token, nil
}

func (h *Handler) login(c echo.Context) error {
	r := c.Request()
	next := LocalPath(c.FormValue("next"), "/admin/webhooks")
	email := c.FormValue("email")
	again := func(status int, e *httpapi.ErrorDetail) error {
		token, err := h.loginToken(c)
		if err != nil {
			return h.fail(c, nil, err)
		}
		none, err := h.noOwner(c)
		if err != nil {
			return h.fail(c, nil, err)
		}
		return h.render(c, status, "login", view{Title: "Sign in", Error: e, Data: loginData{Email: email, Next: next, Token: token, NoOwner: none}})
	}
	if err := h.origin.Check(r); err != nil {
		return again(http.StatusForbidden, &httpapi.ErrorDetail{Code: "CROSS_ORIGIN", Message: "Cross-site sign-in is refused."})
	}
	ck, err := c.Cookie(loginCookie)
	if err != nil || ck.Value == "" || subtle.ConstantTimeCompare([]byte(ck.Value), []byte(c.FormValue("csrf_token"))) != 1 {
		return again(http.StatusForbidden, &httpapi.ErrorDetail{Code: "CSRF_TOKEN_INVALID", Message: "The sign-in form expired. Please try again."})
	}
	if h.auth.Login == nil {
		return again(http.StatusServiceUnavailable, &httpapi.ErrorDetail{Code: "UNAVAILABLE", Message: "Sign-in is not available on this server."})
	}
	if err := h.auth.Login(c.Response(), r, email, c.FormValue("password")); err != nil {
		status, detail := h.describe(c, err)
		return again(status, detail)
	}
	// The form's token has done its job; the session brings its own.
	c.SetCookie(&http.Cookie{Name: loginCookie, Value: "", Path: "/admin/login", MaxAge: -1, HttpOnly: true, Secure: secure(c), SameSite: http.SameSiteStrictMode})
	return c.Redirect(http.StatusSeeOther, next)
}

// secure tells whether the browser reached the server over HTTPS, so the
// UI's cookie is sent over HTTPS only.
func secure(c echo.Context) bool { return c.Scheme() == "https" }

func (h *Handler) logout(c echo.Context, _ *Session) error {
	if h.auth.Logout != nil {
		if err := h.auth.Logout(c.Response(), c.Request()); err != nil && !isKind(err, domain.KindUnauthorized) {
			return h.fail(c, nil, err)
		}
	}
	return c.Redirect(http.StatusSeeOther, "/admin/login")
}
