package auth

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/standmeet/standmeet/internal/adapters/httpapi"
	"github.com/standmeet/standmeet/internal/domain"
	"github.com/standmeet/standmeet/internal/owner"
)

// Session is a granted login as the HTTP side hands it out.
type Session struct {
	Owner owner.Owner
	// Token is the session token (the standmeet_session cookie's value).
	Token string
	// CSRF is the session's CSRF token (the standmeet_csrf cookie's value,
	// to be sent back in X-CSRF-Token or the csrf_token form field).
	CSRF      string
	ExpiresAt time.Time
}

// Login checks email and password for a client at ip and opens a session
// (owner.Service.Login: limits, bans, owner.login). Set its cookies with
// SetSessionCookies.
func (g *Gate) Login(ctx context.Context, email, password, ip, userAgent string) (Session, error) {
	res, err := g.svc.Login(ctx, owner.LoginInput{Email: email, Password: password, IP: ip, UserAgent: userAgent})
	if err != nil {
		return Session{}, err
	}
	return Session{Owner: res.Owner, Token: res.Token, CSRF: CSRFTokenFor(res.Token), ExpiresAt: res.ExpiresAt}, nil
}

// SetSessionCookies sets the session cookie (HttpOnly) and the CSRF cookie
// (readable by the page's script, for the double submit), both
// SameSite=Lax, Path=/, expiring with the session, and Secure when the
// request came over TLS.
func (g *Gate) SetSessionCookies(w http.ResponseWriter, r *http.Request, s Session) {
	secure := g.secure(r)
	maxAge := int(time.Until(s.ExpiresAt).Seconds())
	http.SetCookie(w, &http.Cookie{
		Name: SessionCookie, Value: s.Token, Path: "/", Expires: s.ExpiresAt, MaxAge: maxAge,
		HttpOnly: true, Secure: secure, SameSite: http.SameSiteLaxMode,
	})
	http.SetCookie(w, &http.Cookie{
		Name: CSRFCookie, Value: s.CSRF, Path: "/", Expires: s.ExpiresAt, MaxAge: maxAge,
		Secure: secure, SameSite: http.SameSiteLaxMode,
	})
}

// ClearSessionCookies expires both cookies.
func (g *Gate) ClearSessionCookies(w http.ResponseWriter, r *http.Request) {
	secure := g.secure(r)
	for _, name := range []string{SessionCookie, CSRFCookie} {
		http.SetCookie(w, &http.Cookie{
			Name: name, Value: "", Path: "/", MaxAge: -1, Expires: time.Unix(0, 0),
			HttpOnly: name == SessionCookie, Secure: secure, SameSite: http.SameSiteLaxMode,
		})
	}
}

// Logout ends the request's session, if it has a live one, after checking
// its CSRF token (so a cross-site request cannot log the owner out), and
// clears the cookies.
func (g *Gate) Logout(w http.ResponseWriter, r *http.Request) error {
	c, err := r.Cookie(SessionCookie)
	if err == nil && c.Value != "" {
		if _, err := g.svc.AuthenticateSession(r.Context(), c.Value); err == nil {
			if err := checkCSRF(r, c.Value); err != nil {
				return err
			}
			if err := g.svc.Logout(r.Context(), c.Value); err != nil {
				return err
			}
		}
	}
	g.ClearSessionCookies(w, r)
	return nil
}

// LoginResponse is the answer to POST /api/auth/login.
type LoginResponse struct {
	Owner     owner.OwnerView `json:"owner"`
	CSRFToken string          `json:"csrf_token"`
	ExpiresAt time.Time       `json:"expires_at"`
}

type loginRequest struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

type recoverRequest struct {
	Email string `json:"email"`
}

type completeRecoveryRequest struct {
	Token    string `json:"token"`
	Password string `json:"password"`
}

// Mount adds the public auth routes:
//
//	POST /api/auth/login             {email, password} → 200 {owner, csrf_token, expires_at} + cookies
//	POST /api/auth/logout            → 204, cookies cleared
//	POST /api/auth/recover           {email} → 202 whether or not the account exists
//	POST /api/auth/recover/complete  {token, password} → 204
//
// The JSON routes accept only application/json bodies, which a cross-site
// HTML form cannot send.
func (g *Gate) Mount(e *echo.Echo) {
	e.POST("/api/auth/login", g.handleLogin)
	e.POST("/api/auth/logout", func(c echo.Context) error {
		if err := g.Logout(c.Response(), c.Request()); err != nil {
			return httpapi.WriteError(c, g.logger, err)
		}
		return c.NoContent(http.StatusNoContent)
	})
	e.POST("/api/auth/recover", g.handleRecover)
	e.POST("/api/auth/recover/complete", g.handleCompleteRecovery)
}

func (g *Gate) handleLogin(c echo.Context) error {
	var in loginRequest
	if err := decodeJSON(c.Request(), &in); err != nil {
		return httpapi.WriteError(c, g.logger, err)
	}
	r := c.Request()
	s, err := g.Login(r.Context(), in.Email, in.Password, g.ClientIP(r), r.UserAgent())
	if err != nil {
		return httpapi.WriteError(c, g.logger, err)
	}
	g.SetSessionCookies(c.Response(), r, s)
	return c.JSON(http.StatusOK, LoginResponse{Owner: owner.ViewOwner(s.Owner), CSRFToken: s.CSRF, ExpiresAt: s.ExpiresAt})
}

func (g *Gate) handleRecover(c echo.Context) error {
	var in recoverRequest
	if err := decodeJSON(c.Request(), &in); err != nil {
		return httpapi.WriteError(c, g.logger, err)
	}
	r := c.Request()
	if err := g.svc.RequestRecovery(r.Context(), in.Email, g.ClientIP(r)); err != nil {
		return httpapi.WriteError(c, g.logger, err)
	}
	return c.JSON(http.StatusAccepted, map[string]string{
		"message": "if an account has that email, a recovery link is on its way",
	})
}

func (g *Gate) handleCompleteRecovery(c echo.Context) error {
	var in completeRecoveryRequest
	if err := decodeJSON(c.Request(), &in); err != nil {
		return httpapi.WriteError(c, g.logger, err)
	}
	if _, err := g.svc.CompleteRecovery(c.Request().Context(), in.Token, in.Password); err != nil {
		return httpapi.WriteError(c, g.logger, err)
	}
	return c.NoContent(http.StatusNoContent)
}

// decodeJSON decodes an application/json body into v, refusing unknown
// fields and anything after the JSON value.
func decodeJSON(r *http.Request, v any) error {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "application/json" {
		return echo.NewHTTPError(http.StatusUnsupportedMediaType, "send a JSON body with Content-Type: application/json")
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var maxErr *http.MaxBytesError
		if errors.As(err, &maxErr) {
			return domain.TooLarge("PAYLOAD_TOO_LARGE", "request body is over the limit")
		}
		if errors.Is(err, io.EOF) {
			return domain.Validation("INVALID_JSON", "request body is empty")
		}
		return domain.Validation("INVALID_JSON", "request body is not the expected JSON object")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return domain.Validation("INVALID_JSON", "trailing data after the JSON value")
	}
	return nil
}

// BanMiddleware answers 403 IP_BANNED to a banned client before any
// handler runs. If the ban list cannot be reloaded, the last list read
// still applies and everyone else is let through (logged once per reload
// attempt): the database being down must not turn every route, /readyz
// included, into a 403.
func (g *Gate) BanMiddleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		banned, err := g.svc.IsBanned(r.Context(), g.ClientIP(r))
		if err != nil {
			httpapi.Warn(c.Request().Context(), g.logger, "ip ban list reload failed; using the last list read", err)
		}
		if banned {
			return httpapi.WriteError(c, g.logger, domain.Forbidden(owner.CodeIPBanned, "this address is banned after repeated failed logins"))
		}
		return next(c)
	}
}
